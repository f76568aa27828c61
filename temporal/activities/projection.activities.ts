import { ApplicationFailure, Context } from '@temporalio/activity';
import { retriesStorageWrite } from '../../src/db/failure-kinds';
import type { PauseRecord, PauseResolution, ProgressSave } from '../../src/db/run-projection';
import type { RunRepository } from '../../src/db/run-repository';
import { FailureType } from '../shared/failures';

/** Local activities that keep the run's MongoDB projection in step with the workflow. */
export function createProjectionActivities(runs: RunRepository) {
  /**
   * A failure the write may outlive (MongoDB away; an unknown error, a few times: failure-kinds.ts)
   * is thrown as it is, and the policy retries it with backoff. Any other fails the run: its record
   * says why, and the failure is non-retryable, so a run never wedges in a retry loop.
   */
  async function write(runId: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (err) {
      if (retriesStorageWrite(err, Context.current().info.attempt)) throw err;
      const message = `The run record could not be saved: ${(err as Error).message}`;
      await runs.markFailed(runId, message).catch(() => undefined);
      throw ApplicationFailure.nonRetryable(message, FailureType.ProjectionRejected);
    }
  }
  return {
    async saveProgress(input: ProgressSave): Promise<void> {
      await write(input.runId, () => runs.save(input));
    },
    /** The pause record first: a reader that sees the run PAUSED (the inbox) also finds its open pause. */
    async recordPause(input: { pause: PauseRecord; progress: ProgressSave }): Promise<void> {
      await write(input.progress.runId, async () => {
        await runs.recordPause(input.pause);
        await runs.save(input.progress, { opened: input.pause });
      });
    },
    async resolvePause(input: { resolution: PauseResolution; progress: ProgressSave }): Promise<void> {
      await write(input.progress.runId, () => Promise.all([runs.resolvePause(input.resolution), runs.save(input.progress, { resumed: input.resolution })]));
    },
  };
}
