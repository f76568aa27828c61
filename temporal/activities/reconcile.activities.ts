import { DEFAULT_WORKSPACE, workspaceScope } from '../../src/db/workspace-scope';
import { Context } from '@temporalio/activity';
import type { Models, RunDoc } from '../../src/db/models';
import { createRunProjection } from '../../src/db/runs/run-projection';
import { createRunEvents } from '../../src/db/runs/run-events';
import { createRunLookups } from '../../src/db/runs/run-lookups';
import { createReconcileSuspects } from '../../src/db/reconcile-suspects';
import type { RunLauncher } from '../../src/runs/launcher';
import { OPEN_RUN_STATUSES } from '../../src/engine/statuses';
import { createEvalReconciler } from './eval-reconcile';
import { createRunActionReconciler } from './run-action-reconcile';
import { workflowStatus } from './workflow-status';
import type { ReconcilePageInput, ReconcilePageResult } from '../../src/contracts/reconcile-contract';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import type { WorkQueue } from '../../src/contracts/work-share';

/** Temporal's word for how a workflow ended, as a run's message. */
const ENDED: Record<string, string> = {
  TERMINATED: 'Its Temporal workflow was terminated outside Spur',
  TIMED_OUT: 'Its Temporal workflow timed out',
  FAILED: 'Its Temporal workflow failed without recording why',
  COMPLETED: 'Its Temporal workflow completed without recording the result',
};

/** `suspect`: its workflow was not found, which is acted on only if it still is a grace period later. */
type Verdict = 'alive' | 'suspect' | 'started' | 'discarded' | 'failed' | 'canceled';

export interface ReconcileDeps {
  models: Models;
  /** The queue and workflow-id prefix this worker serves. */
  temporal: WorkQueue;
  /** Starts a stored run's workflow the way the api does (src/runs/launcher.ts). */
  launcher: RunLauncher;
  /** SPUR_RUN_ACTION_RATE: a bulk action the reconciler starts goes at the api's pace. */
  runActionRate: number;
}

/**
 * The reconciler's work: open runs (by their MongoDB record) whose Temporal workflow is not
 * running. A never-started run (its api died between the insert and the start) is launched as the
 * api launches it (an eval's, by starting its eval); a run whose workflow ended without recording
 * it is closed with a message.
 */
export function createReconcileActivities({ models, temporal, launcher, runActionRate }: ReconcileDeps) {
  const projection = createRunProjection(models, createRunEvents(models));
  const suspects = createReconcileSuspects(models);
  const lookups = createRunLookups(models);
  const reconcileEvalBatch = createEvalReconciler({ models, temporal, launcher, fail });
  const runStatus = (runId: string) => workflowStatus(runWorkflowId(runId, temporal.workflowIdPrefix));

  async function reconcileRuns(page: ReconcilePageInput): Promise<ReconcilePageResult> {
    const ctx = Context.current();
    // FerretDB v1 scans for a status filter: one bounded page per activity, resumed by `_id`.
    const startedBefore = new Date(Date.now() - page.graceMs);
    const runs = await lookups.openPage(OPEN_RUN_STATUSES, startedBefore, page.after, page.pageSize);
    const tally: ReconcilePageResult = {
      checked: runs.length,
      started: 0,
      discarded: 0,
      failed: 0,
      canceled: 0,
      next: runs.length === page.pageSize ? (runs.at(-1)?._id ?? null) : null,
    };
    const missingSince = await suspects.of(runs.map((r) => r._id));
    for (const run of runs) {
      const since = missingSince.get(run._id) ?? null;
      // The fleet's pass looks at every workspace; what it does for a run is that run's workspace's.
      const verdict = await workspaceScope.run(run.workspace_id ?? DEFAULT_WORKSPACE, () =>
        reconcile(run, since, page.graceMs),
      );
      // Found after all, or dealt with: no longer a suspect.
      if (since && verdict !== 'suspect') await suspects.clear(run._id);
      if (verdict !== 'alive' && verdict !== 'suspect') {
        tally[verdict]++;
        ctx.log.info(`reconciler: run ${run._id} (${run.status}) ${verdict}`);
      }
      ctx.heartbeat(run._id);
    }
    return tally;
  }

  async function reconcile(run: RunDoc, missingSince: Date | null, graceMs: number): Promise<Verdict> {
    const status = await runStatus(run._id);
    if (status === 'RUNNING' || status === 'CONTINUED_AS_NEW') return 'alive';
    if (status === 'CANCELLED') {
      await projection.cancelWithoutWorkflow(run._id, OPEN_RUN_STATUSES);
      return 'canceled';
    }
    if (status !== null)
      return fail(run, ENDED[status] ?? `Its Temporal workflow ended (${status}) without recording it`);
    if (run.parent_run_id) {
      // A child-mode batch row is recorded before its parent starts it.
      const parent = await runStatus(run.parent_run_id);
      if (parent === 'RUNNING' || parent === 'CONTINUED_AS_NEW') return 'alive';
      if (parent === null && !(await stillMissing(run, missingSince, graceMs))) return 'suspect';
      return fail(run, `Its batch ${run.parent_run_id} ended before the row ran`);
    }
    // An eval's batch is started by the eval's workflow, as its child.
    if (run.run_type === 'eval' && run.status === 'PENDING') return reconcileEvalBatch(run);
    if (run.status !== 'PENDING') {
      if (!(await stillMissing(run, missingSince, graceMs))) return 'suspect';
      return fail(run, 'Its Temporal workflow no longer exists (deleted, or past the namespace retention)');
    }
    const launched = await launcher.launch(run);
    return launched.outcome === 'started' ? 'started' : launched.outcome === 'discarded' ? 'discarded' : 'failed';
  }

  async function fail(run: RunDoc, message: string): Promise<Verdict> {
    await projection.failWithoutWorkflow(run._id, OPEN_RUN_STATUSES, message);
    return 'failed';
  }

  /**
   * Whether a workflow Temporal did not find was already missing a grace period ago. One "not
   * found" is no proof: a server recovering its persistence (PostgreSQL restarted under it) was seen
   * answering so for live runs, and the reconciler failed 27 of them. The first answer is recorded;
   * only one a grace period later, still "not found", ends the run.
   */
  async function stillMissing(run: RunDoc, missingSince: Date | null, graceMs: number): Promise<boolean> {
    if (missingSince) return Date.now() - missingSince.getTime() >= graceMs;
    await suspects.suspect(run._id, new Date());
    Context.current().log.info(`reconciler: run ${run._id} (${run.status}) has no workflow; failed if still so later`);
    return false;
  }

  return { reconcileRuns, ...createRunActionReconciler({ models, temporal, runActionRate }) };
}
