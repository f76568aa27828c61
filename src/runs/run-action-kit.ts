import type { Client } from '@temporalio/client';
import type { DefinitionLimits } from '../config/settings';
import type { Models, WorkflowDoc } from '../db/models';
import type { IdempotencyKeys } from '../db/idempotency-keys';
import type { RunRepository } from '../db/runs/run-repository';
import type { WorkflowVersions } from '../db/workflow-versions';
import type { RunLauncher } from './launcher';
import type { RunReader } from './reader';
import type { RunRecorder } from './recorder';
import { notFound } from '../errors';
import { createPauseDecision } from './pause-decision';
import { createRunActionClaims } from './run-action-claims';
import { createRunActionSteps } from './run-action-steps';
import { createRunCancel } from './run-cancel';
import { createReruns } from './reruns';
import { createRetries } from './retries';

export interface RunActionKitDeps {
  models: Models;
  /** The process's kernel (src/kernel.ts): the run's storage, the one recorder and launcher. */
  kernel: {
    runRecords: RunRepository;
    versions: WorkflowVersions;
    recorder: RunRecorder;
    launcher: RunLauncher;
    reader: RunReader;
    keys: IdempotencyKeys;
  };
  temporal: () => Client;
  workflowIdPrefix: string;
  definitionLimits: DefinitionLimits;
  /** How long a bulk decision waits for the run's worker to apply it before the step is tried again. */
  decisionWaitMs: number;
}

/** A bulk action's per-run steps, composed from the process's kernel (the worker runs them). */
export function composeRunActionSteps(deps: RunActionKitDeps) {
  const { models, kernel, temporal, workflowIdPrefix } = deps;
  const { runRecords, versions, recorder, launcher, reader } = kernel;
  const workflows = {
    async load(id: string): Promise<WorkflowDoc> {
      const doc = await models.Workflow.findById(id).lean<WorkflowDoc>();
      if (!doc) throw notFound.workflow();
      return doc;
    },
  };
  return createRunActionSteps({
    runRecords,
    cancelRun: createRunCancel({ runRecords, temporal, workflowIdPrefix }),
    retry: createRetries({ runRecords, versions, recorder, launcher }),
    reruns: createReruns({
      runRecords,
      workflows,
      versions,
      recorder,
      launcher,
      reader,
      definitionLimits: deps.definitionLimits,
    }),
    claims: createRunActionClaims({ keys: kernel.keys, runRecords, launcher }),
    decide: createPauseDecision({ runRecords, temporal, workflowIdPrefix, waitMs: deps.decisionWaitMs }),
  });
}
