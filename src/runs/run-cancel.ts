import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { runWorkflowOpen } from './run-workflow-status';
import type { RunDoc } from '../db/models';
import type { RunRepository } from '../db/runs/run-repository';
import { runWorkflowId } from '../contracts/workflow-names';
import { SpurError } from '../errors';
import type { RunStatus } from '../engine/statuses';

/** The statuses a run can be cancelled from. */
export const CANCELLABLE: ReadonlySet<RunStatus> = new Set<RunStatus>(['PAUSED', 'RUNNING', 'PENDING']);

export interface RunCancelDeps {
  runRecords: Pick<RunRepository, 'cancelWithoutWorkflow' | 'cancelRequests'>;
  temporal: () => Client;
  workflowIdPrefix: string;
}

/**
 * The one way a run is cancelled, whoever asks (`cancel_workflow`, a bulk action): its workflow is
 * cancelled (activities stop through their heartbeats) and records CANCELED itself. Cancelling a
 * workflow whose cancel was requested already changes nothing, so asking twice is harmless. Once
 * Temporal has taken the cancel, the run is marked: a node running as a local activity (a short
 * call) hears of the cancel only with its workflow task's next completion, and stops on the mark
 * before that (temporal/activities/run-cancel-watch.ts). Marked only then, so a node never stops
 * for a cancel that is not on its way.
 */
export function createRunCancel(deps: RunCancelDeps) {
  const handle = (runId: string) => deps.temporal().workflow.getHandle(runWorkflowId(runId, deps.workflowIdPrefix));

  /**
   * Requests the cancel of an open run (CANCELLABLE); answers once it is requested, not once
   * recorded: whether the run's Temporal workflow is still running, to take it.
   */
  return async function cancelRun(run: Pick<RunDoc, '_id' | 'status'>): Promise<boolean> {
    let workflowGone = false;
    try {
      await handle(run._id)
        .cancel()
        .catch((err: unknown) => {
          // A second cancel of the same workflow (a bulk action's step after a crash) asks for nothing new.
          if (!alreadyRequested(err)) throw err;
        });
      // Temporal accepts a cancel of a workflow that has already closed (e.g. terminated by an
      // operator) without an error; then no workflow will ever record it.
      workflowGone = !(await runWorkflowOpen(deps.temporal(), deps.workflowIdPrefix, run._id));
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError))
        throw new SpurError(
          'unavailable',
          'TEMPORAL_UNAVAILABLE',
          `Could not cancel the run: ${(err as Error).message}`,
        );
      workflowGone = true;
    }
    if (!workflowGone) await deps.runRecords.cancelRequests.mark(run._id);
    // A run no worker has picked up has no writer yet (the workflow, when it starts and sees the
    // cancel, leaves a final status as it is); a run whose workflow is gone never will have one.
    // Either way the cancel is recorded here.
    if (run.status === 'PENDING' || workflowGone)
      await deps.runRecords.cancelWithoutWorkflow(
        run._id,
        workflowGone ? ['PENDING', 'RUNNING', 'PAUSED'] : ['PENDING'],
      );
    return !workflowGone;
  };
}

function alreadyRequested(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { message, cause } = e as { message?: unknown; cause?: unknown };
    if (/cancellation already requested|CancellationAlreadyRequested/i.test(String(message ?? ''))) return true;
    e = cause;
  }
  return false;
}

export type RunCancel = ReturnType<typeof createRunCancel>;
