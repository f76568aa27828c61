import { Context } from '@temporalio/activity';
import { createEvalRecords } from '../../src/db/eval-records';
import type { EvalRunDoc, Models, RunDoc } from '../../src/db/models';
import { isFinalStatus } from '../../src/engine/statuses';
import { createEvalLauncher } from '../../src/evals/eval-launcher';
import type { RunLauncher } from '../../src/runs/launcher';
import { evalWorkflowId } from '../../src/contracts/workflow-names';
import type { WorkQueue } from '../../src/contracts/work-share';
import { workflowStatus } from './workflow-status';

export interface EvalReconcileDeps {
  models: Models;
  temporal: WorkQueue;
  launcher: RunLauncher;
  /** The reconciler's way to end an open run that has no workflow, with a message. */
  fail: (run: RunDoc, message: string) => Promise<unknown>;
}

/**
 * The reconciler's part for an eval's batch that never started: the eval's own workflow starts
 * that batch as its child, so starting the batch alone would run the rows with nobody scoring
 * them. An api that died after recording the eval and before starting it leaves both PENDING;
 * the eval's workflow is started here as the api would have started it.
 */
export function createEvalReconciler({ models, temporal, launcher, fail: failRun }: EvalReconcileDeps) {
  const records = createEvalRecords(models);
  const launchEval = createEvalLauncher({ models, launcher, temporal: () => Context.current().client, ...temporal });

  async function fail(batch: RunDoc, message: string): Promise<'failed'> {
    await failRun(batch, message);
    return 'failed';
  }

  /** A PENDING eval batch (`run_type: 'eval'`) whose own workflow does not exist. */
  return async function reconcileEvalBatch(batch: RunDoc): Promise<'alive' | 'started' | 'failed'> {
    const run = await models.EvalRun.findOne({ batch_run_id: batch._id }).lean<EvalRunDoc>();
    // The api died between the two records: no client was answered with this eval.
    if (!run) return fail(batch, 'Its eval was never recorded: the api stopped while launching it');
    if (isFinalStatus(run.status)) return fail(batch, `Its eval ${run._id} ended (${run.status}) before the batch ran`);
    const status = await workflowStatus(evalWorkflowId(run._id, temporal.workflowIdPrefix));
    // The eval's workflow starts its batch as its first step (a worker may be on its way).
    if (status === 'RUNNING') return 'alive';
    if (status !== null) {
      const message = `The eval's Temporal workflow ended (${status}) before its batch started`;
      await records.setStatus(run._id, 'FAILED', message);
      return fail(batch, message);
    }
    const started = await launchEval(run, batch);
    Context.current().log.info(`reconciler: eval ${run._id} (batch ${batch._id}) ${started.outcome}`);
    return started.outcome;
  };
}
