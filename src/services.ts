import type { Client } from '@temporalio/client';
import type { Config } from './config';
import type { Models } from './db/models';
import { createPauseService } from './modules/pauses/pauses.service';
import { createBatchStarter } from './modules/runs/batch-starter';
import { createRunStarter } from './modules/runs/run-starter';
import { createRunReader } from './modules/runs/runs.service';
import { createEnvService } from './modules/env-mgmt/env-mgmt.service';
import { createDatasetService } from './modules/datasets/datasets.service';
import { createOutputFileService } from './modules/output-files/output-files.service';
import { SecretBox } from './modules/env-mgmt/secret-box';
import { createTestFileService } from './modules/files/test-files.service';
import { createStoredFileService } from './modules/files/stored-files.service';
import { createAiAssist } from './modules/ai/ai-assist';
import { createVersionService } from './modules/workflows/versions.service';
import { createWorkflowService } from './modules/workflows/workflows.service';

export interface ServiceDeps {
  models: Models;
  secretKey: Buffer;
  temporal: Client;
  config: Pick<Config, 'temporal' | 'runs' | 'datasets'>;
  /** Start runs with eager workflow start (the client shares a NativeConnection with a worker here). */
  eagerStart?: boolean;
  /** Aborted when the api starts draining for shutdown (main.ts). */
  stopping?: AbortSignal;
}

/** The api's business services, wired to one set of models and one Temporal client. */
export function createServices({ models, secretKey, temporal, config, eagerStart = false, stopping }: ServiceDeps) {
  const workflows = createWorkflowService(models);
  const versions = createVersionService(models);
  const reader = createRunReader(models);
  const env = createEnvService(models, new SecretBox(secretKey));
  const starterDeps = { models, workflows, versions, reader, temporal, taskQueue: config.temporal.taskQueue, workflowIdPrefix: config.temporal.workflowIdPrefix, blockingWaitMs: config.runs.blockingWaitMs, eagerStart, stopping };
  return {
    workflows,
    versions,
    runs: reader,
    runStarter: createRunStarter(starterDeps),
    startBatch: createBatchStarter({ ...starterDeps, batchHistoryEvents: config.runs.batchHistoryEvents, batchRowMode: config.runs.batchRowMode }),
    pauses: createPauseService({ models, reader, temporal, workflowIdPrefix: config.temporal.workflowIdPrefix, actionWaitMs: config.runs.actionWaitMs }),
    testFiles: createTestFileService(models),
    storedFiles: createStoredFileService(models),
    env,
    aiAssist: createAiAssist(env),
    datasets: createDatasetService({ models, runs: reader, limits: config.datasets }),
    outputFiles: createOutputFileService(models),
  };
}

export type Services = ReturnType<typeof createServices>;
