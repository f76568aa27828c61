import { ApplicationFailure, Context } from '@temporalio/activity';
import { retriesStorageWrite } from '../../src/db/failure-kinds';
import {
  type PauseRecord,
  type PauseResolution,
  type ProgressSave,
  RECORD_REFUSED,
} from '../../src/db/runs/run-projection';
import type { SavedAs } from '../../src/engine/run-contract';
import type { RunRepository } from '../../src/db/runs/run-repository';
import type { RunOutcomes } from '../../src/engine/run-outcomes';
import type { ApprovalDeliveryOutcome, PauseDecision } from '../../src/engine/approvals';
import { FailureType } from '../../src/contracts/failures';
import { exportRunSpan } from '../../src/telemetry/run-span';
import type { RunTrace } from '../../src/contracts/trace-ids';
import type { SpurTracer } from '../../src/telemetry/tracer';

/** A run's final save, in a traced run: what its span needs besides the save. */
export interface RunEnded {
  workflowId: string;
  trace: RunTrace;
}

/**
 * Local activities that keep the run's MongoDB projection in step with the workflow. `outcomes`:
 * in a process that also hosts the api, a blocking run is answered once its final save is written.
 */
export function createProjectionActivities(runs: RunRepository, outcomes?: RunOutcomes, tracer?: SpurTracer) {
  /**
   * A failure the write may outlive (MongoDB away; an unknown error, a few times: failure-kinds.ts)
   * is thrown as it is, and the policy retries it with backoff. Any other fails the run: its record
   * says why, and the failure is non-retryable, so a run never wedges in a retry loop. Should that
   * mark itself fail (SQLite busy under load), its error is thrown instead and the policy retries
   * the whole write: the run stops at the refusal (RunKeeper.stopped), so no later save would mark it.
   */
  async function write<T>(runId: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (retriesStorageWrite(err, Context.current().info.attempt)) throw err;
      const message = `${RECORD_REFUSED}: ${(err as Error).message}`;
      await runs.markFailed(runId, message);
      throw ApplicationFailure.nonRetryable(message, FailureType.ProjectionRejected);
    }
  }
  return {
    /** Returns what the save left (the run's head, its tasks' version; null: unknown), for the workflow's next save. */
    async saveProgress({ ended, ...input }: ProgressSave & { ended?: RunEnded }): Promise<SavedAs> {
      // The blocking answer goes out once the run's record is final; its events follow.
      const outputsById = input.run?.final?.outputsById;
      const answer = outputsById && outcomes ? () => outcomes.publish(input.runId, { outputsById }) : undefined;
      const head = await write(input.runId, () => runs.save(input, undefined, answer));
      // The run span, once its end is recorded: a retried save exports it again, with the same ids.
      if (ended && input.run)
        exportRunSpan(tracer, {
          runId: input.runId,
          kind: 'run',
          ...ended,
          status: input.run.status,
        });
      return head;
    },
    /** The pause record first: a reader that sees the run PAUSED (the inbox) also finds its open pause. */
    async recordPause(input: { pause: PauseRecord; progress: ProgressSave }): Promise<SavedAs> {
      return write(input.progress.runId, async () => {
        await runs.recordPause(input.pause);
        return runs.save(input.progress, { opened: input.pause });
      });
    },
    /** How a message with approval links went, as the run's event (the run's workflow writes its events). */
    async recordNotification(input: { runId: string; delivery: ApprovalDeliveryOutcome }): Promise<void> {
      // Not through write(): an event that cannot be stored must not fail the run it tells about.
      await runs.recordNotification(input.runId, input.delivery);
    },
    /** Decisions on a pause still open (a quorum not reached yet). */
    async recordPauseDecisions(input: { runId: string; pauseId: string; decisions: PauseDecision[] }): Promise<void> {
      await write(input.runId, () => runs.recordPauseDecisions(input.pauseId, input.decisions));
    },
    async resolvePause(input: { resolution: PauseResolution; progress: ProgressSave }): Promise<SavedAs> {
      const [, head] = await write(input.progress.runId, () =>
        Promise.all([runs.resolvePause(input.resolution), runs.save(input.progress, { resumed: input.resolution })]),
      );
      return head;
    },
  };
}
