import { trusted } from 'mongoose';
import { insertIgnoringDuplicates } from '../ids';
import type { Models } from '../models';

/**
 * Marks of runs whose cancel was asked of Temporal (run_cancel_requests): the api marks, a node
 * running as a local activity looks (temporal/activities/run-cancel-watch.ts). Each a one-document
 * insert or `_id` lookup.
 */
export function createRunCancelRequests(models: Models) {
  const { RunCancelRequest } = models;
  return {
    /** The run's cancel was requested; marking it twice is marking it once. */
    async mark(runId: string): Promise<void> {
      await insertIgnoringDuplicates(RunCancelRequest, [{ _id: runId, at: new Date() }]);
    },

    async marked(runId: string): Promise<boolean> {
      return (await RunCancelRequest.exists({ _id: runId })) !== null;
    },

    /** With their runs. */
    async removeOfRuns(runIds: readonly string[]): Promise<void> {
      await RunCancelRequest.deleteMany({ _id: trusted({ $in: [...runIds] }) });
    },
  };
}

export type RunCancelRequests = ReturnType<typeof createRunCancelRequests>;
