import type { Client } from '@temporalio/client';
import type { Config } from './config/settings';
import type { Models } from './db/models';
import { valuesOf } from './db/values';
import { createRunRepository } from './db/runs/run-repository';
import { createWorkflowVersions } from './db/workflow-versions';
import { createIdempotencyKeys } from './db/idempotency-keys';
import { createWorkflowPauses } from './db/workflow-pauses';
import { createRunReader } from './runs/reader';
import { runWorkflowStatus } from './runs/run-workflow-status';
import { createRunLauncher, type RunLauncherDeps } from './runs/launcher';
import { createRunRecorder } from './runs/recorder';
import { createScheduledRunRecorder } from './runs/scheduled-runs';
import { createSubworkflowRunRecorder } from './runs/subworkflow-runs';
import { SecretBox } from './secrets/secret-box';
import { approvalTokens } from './approvals/approval-token';
import { inboundCallbackTokens } from './secrets/inbound-callback-token';
import { createOutboundFetch } from './outbound/outbound-fetch';
import { createBoundedParser } from './parsing/parse-pool';
import { createLanceStore } from './rag/lance-store';
import { createPriceBook } from './usage/price-book';
import { createProviderLimits } from './usage/provider-limits';
import { createBudgets } from './usage/budgets';
import { createRunEraser } from './runs/run-eraser';
import { createRetention } from './runs/retention';

export interface KernelDeps {
  models: Models;
  config: Pick<Config, 'values' | 'outbound' | 'parsing' | 'rag' | 'temporal' | 'runs' | 'limits'>;
  secretKey: Buffer;
  /** Who starts workflows: the api's client, or the client of the reconciler's activity. */
  temporal: () => Client;
  /** Eager workflow start: only with a client over a NativeConnection shared with a worker. */
  eagerStart: boolean;
  /** What a start Temporal refuses does to the run (runs/launcher.ts says why each side chooses its own). */
  whenRefused: RunLauncherDeps['whenRefused'];
}

/**
 * What the api and the worker both build, built once here so the two sides cannot drift apart:
 * the run's storage, reader, recorder and launcher, values, versions, prices, budgets and limits,
 * the run eraser and retention,
 * the secret box, the outbound client, the parse threads, the vector store and approval tokens.
 * Each process composes one kernel and builds its own side (services.ts, temporal/spur-worker.ts) on it.
 */
export function composeKernel({ models, config, secretKey, temporal, eagerStart, whenRefused }: KernelDeps) {
  const values = valuesOf(models.conn, config.values, secretKey);
  const runRecords = createRunRepository(models, values);
  // One cache of pinned versions per process: they never change once written.
  const versions = createWorkflowVersions(models);
  const pauses = createWorkflowPauses(models);
  const recorder = createRunRecorder({ models, values, runRecords, versions, pauses });
  const prices = createPriceBook(models);
  const keys = createIdempotencyKeys(models);
  const launcher = createRunLauncher({
    models,
    runRecords,
    keys,
    temporal,
    taskQueue: config.temporal.taskQueue,
    workflowIdPrefix: config.temporal.workflowIdPrefix,
    fairShare: config.temporal.fairShare,
    eagerStart,
    runHistoryEvents: config.runs.runHistoryEvents,
    batch: config.runs,
    whenRefused,
  });
  const budgets = createBudgets(models, prices);
  const eraser = createRunEraser({ models, runRecords, budgets, secretKey });
  return {
    values,
    runRecords,
    versions,
    reader: createRunReader(
      models,
      versions.byId,
      async (runId) => (await runWorkflowStatus(temporal(), config.temporal.workflowIdPrefix, runId)) !== null,
    ),
    recorder,
    keys,
    launcher,
    pauses,
    recordScheduledRun: createScheduledRunRecorder({
      models,
      recorder,
      runRecords,
      versions,
      definitionLimits: config.limits,
    }),
    recordSubworkflowRun: createSubworkflowRunRecorder({
      models,
      recorder,
      runRecords,
      versions,
      values,
      definitionLimits: config.limits,
    }),
    box: new SecretBox(secretKey),
    approvalTokens: approvalTokens(secretKey),
    /** WaitForCallbackNodes' callback tokens: minted by workers' templates, checked by the api. */
    callbackTokens: inboundCallbackTokens(secretKey),
    // Every request either side makes for a run or a client (nodes, embeddings, callbacks, AI helpers) follows one policy.
    outbound: createOutboundFetch(config.outbound),
    // Documents and dataset files are parsed on its threads, never on the event loop.
    parser: createBoundedParser(config.parsing),
    vectors: createLanceStore(config.rag.vectorStoreUri, config.rag),
    prices,
    budgets,
    /** Deleting finished runs: one now (the api's DELETE), or every expired one (retention's pass). */
    eraser,
    retention: createRetention({ models, eraser, defaultDays: config.runs.retentionDays }),
    providerLimits: createProviderLimits(models),
  };
}

export type Kernel = ReturnType<typeof composeKernel>;
