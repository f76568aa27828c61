import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { RunRepository } from '../db/runs/run-repository';
import { ConflictError, SpurError } from '../errors';
import { CANCELLABLE, type RunCancel } from './run-cancel';
import { runWorkflowOpen } from './run-workflow-status';

/** How long a workflow's delete waits for its cancelled runs' workflows to close. */
export const RUNS_STOP_WAIT_MS = 15_000;
/** Runs whose Temporal workflow is looked at at once while waiting. */
const DESCRIBE_AT_ONCE = 16;

export interface WorkflowRunsStopDeps {
  runRecords: Pick<RunRepository, 'ofWorkflowIn'>;
  cancelRun: RunCancel;
  temporal: () => Client;
  workflowIdPrefix: string;
  waitMs?: number;
}

/**
 * Before a workflow's delete removes its runs' records, its open runs stop: each is cancelled the
 * one way (run-cancel.ts), and the delete goes on once their Temporal workflows have closed. Until
 * it closes, a run's workflow writes its records (a save that has updated the run and has yet to add
 * its events, a node's stored values, usage): removed any earlier, some of that would land after the
 * removal with no run left to find it, and the run would go on calling models for a workflow that
 * is gone. A PENDING run is not waited for: the api records its cancel, and its workflow, should a
 * worker start it, finds the record final and writes nothing (and no worker may be running).
 */
export function createWorkflowRunsStop(deps: WorkflowRunsStopDeps) {
  const waitMs = deps.waitMs ?? RUNS_STOP_WAIT_MS;

  async function isOpen(runId: string): Promise<boolean> {
    try {
      return await runWorkflowOpen(deps.temporal(), deps.workflowIdPrefix, runId);
    } catch (err) {
      throw new SpurError(
        'unavailable',
        'TEMPORAL_UNAVAILABLE',
        `Could not see whether run ${runId} has stopped: ${(err as Error).message}`,
      );
    }
  }

  async function stillOpen(runIds: string[]): Promise<string[]> {
    const open: string[] = [];
    for (let i = 0; i < runIds.length; i += DESCRIBE_AT_ONCE) {
      const slice = runIds.slice(i, i + DESCRIBE_AT_ONCE);
      const states = await Promise.all(slice.map(isOpen));
      open.push(...slice.filter((_, j) => states[j]));
    }
    return open;
  }

  /** Cancels the workflow's open runs and answers once their workflows have closed; 409 if one has not in time. */
  return async function stopOpenRunsOf(workflowId: string): Promise<void> {
    const open = await deps.runRecords.ofWorkflowIn(workflowId, [...CANCELLABLE]);
    // The cancel says whether the run's workflow was still running once it was asked.
    let waiting: string[] = [];
    for (const run of open) if ((await deps.cancelRun(run)) && run.status !== 'PENDING') waiting.push(run._id);
    const deadline = Date.now() + waitMs;
    for (let pauseMs = 50; waiting.length > 0; pauseMs = Math.min(500, pauseMs * 2)) {
      if (Date.now() >= deadline)
        throw new ConflictError(
          `Workflow ${workflowId} has ${waiting.length} run(s) still stopping after their cancel (${waiting
            .slice(0, 5)
            .join(', ')}): delete it again in a moment`,
          'WORKFLOW_RUNS_STOPPING',
        );
      await sleep(pauseMs);
      waiting = await stillOpen(waiting);
    }
  };
}

export type WorkflowRunsStop = ReturnType<typeof createWorkflowRunsStop>;
