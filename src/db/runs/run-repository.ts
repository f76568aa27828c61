import { trusted } from 'mongoose';
import { createBatchRunRecords } from './batch-run-records';
import { createCallbackDeliveries } from '../callback-deliveries';
import { createApprovalDeliveries } from './approval-deliveries';
import { insertWithNewId } from '../ids';
import type { Models, RunDoc } from '../models';
import { type NewRun, runDocument } from './run-documents';
import { createRunEvents } from './run-events';
import { createNodeAttempts } from './node-attempts';
import { createRunCancelRequests } from './run-cancel-requests';
import { createProviderBatchRecords } from '../provider-batch-records';
import { createRunLookups } from './run-lookups';
import { createRunProjection } from './run-projection';
import { createTaskDeltas } from './task-deltas';
import type { Values } from '../values';

export type { EndedRow, EndedRunSummary, RowRecordBase } from './batch-run-records';

/**
 * The one owner of run records (runs, their tasks and pauses, and the values they hold by
 * reference): every run document is built here (run-documents.ts) and every write goes through
 * here — the api's run creation, the run workflow's projection (run-projection.ts) and a batch's
 * bookkeeping (batch-run-records.ts). DESIGN's "one writer per document" as structure.
 */
export function createRunRepository(models: Models, values: Values) {
  const { Run } = models;
  const lookups = createRunLookups(models);

  const events = createRunEvents(models);
  const projection = createRunProjection(models, events);
  const deltas = createTaskDeltas(models);
  const cancelRequests = createRunCancelRequests(models);
  /**
   * Runs and every record of theirs: tasks, pauses, events, streamed text, callback and approval
   * deliveries, failed attempts, cancel marks and stored values; the runs themselves last, so a
   * removal cut short is found again.
   */
  async function removeRuns(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const all = [...ids];
    await projection.removeTasksAndPausesOf(all);
    await createCallbackDeliveries(models).removeOfRuns(all);
    await createApprovalDeliveries(models).removeOfRuns(all);
    await events.removeOfRuns(all);
    await deltas.removeOfRuns(all);
    await createProviderBatchRecords(models).removeOfRuns(all);
    await createNodeAttempts(models).removeOfRuns(all);
    await cancelRequests.removeOfRuns(all);
    await values.deleteScopes(all);
    await Run.deleteMany({ _id: trusted({ $in: all }) });
  }

  return {
    ...projection,
    ...createBatchRunRecords(models, values, events),
    ...lookups,
    events,
    /** Running tasks' streamed text (live only; see task-deltas.ts). */
    deltas,
    /** Marks of runs whose cancel was asked of Temporal, for nodes running as local activities. */
    cancelRequests,

    /**
     * A new run with a fresh id (`R<n>`), PENDING. `fieldsFor` says what it records, given its id:
     * large values are stored under that id (and an output file made for it) before the record exists.
     */
    async create(fieldsFor: (runId: string) => Promise<Omit<NewRun, 'id' | 'seq'>>): Promise<RunDoc> {
      return insertWithNewId(models.conn, 'run', lookups.exists, async (id, seq) => {
        const run = runDocument({ ...(await fieldsFor(id)), id, seq });
        await Run.create(run);
        return run;
      });
    },

    /** The run cannot go on (Temporal refused its workflow, its record cannot be saved): the record says why. */
    async markFailed(runId: string, message: string): Promise<void> {
      await events.append(
        runId,
        { kind: 'closed', status: 'FAILED', message, tasks: [] },
        { fields: { status: 'FAILED', message, end_time: new Date() } },
      );
    },

    /** A run recorded for a key another request holds: never started, never answered; it goes with its values. */
    async discardUnstarted(runId: string): Promise<void> {
      await Run.deleteOne({ _id: runId, status: 'PENDING' });
      await values.deleteScopes([runId]);
    },

    /** An output file was deleted: its batch runs stay, without it (PySpur deletes the runs with it, losing their history). */
    async clearOutputFile(outputFileId: string): Promise<void> {
      await Run.updateMany({ output_file_id: outputFileId }, { $set: { output_file_id: null } });
    },

    /** A workflow's delete takes its runs with it (PySpur cascades): tasks, pauses, events and stored values too. */
    async removeOfWorkflow(workflowId: string): Promise<void> {
      const ids = (await Run.find({ workflow_id: workflowId }, { _id: 1 }).lean<Array<{ _id: string }>>()).map(
        (r) => r._id,
      );
      await removeRuns(ids);
    },

    removeRuns,
  };
}

export type RunRepository = ReturnType<typeof createRunRepository>;
