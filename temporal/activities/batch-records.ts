import { trusted } from 'mongoose';
import { fromJsonText, toJsonText } from '../../src/db/json-text';
import { isDuplicateKeyError } from '../../src/db/ids';
import type { Models, RunDoc } from '../../src/db/models';
import type { RowOutcome } from '../shared/batch-contract';
import type { NodeOutput, TaskRecord } from '../../src/engine/run-contract';
import type { RowRun } from './batch-row';

/** What every row run of one batch shares on its record. */
export interface RowRecordBase {
  seq: number;
  workflowId: string;
  workflowVersionId: string;
  parentRunId: string;
  datasetId: string;
}

/**
 * Batch row runs as run records, written in bulk: one insert per collection for all the rows a
 * flush carries (FerretDB v1: an insert is cheap, an update ~10×). Rows are inserted only when
 * they have ended, so each record is written once.
 */
export function createBatchRecords(models: Models) {
  const { Run, RunTasks } = models;

  return {
    async insertEnded(base: RowRecordBase, rows: Array<{ run: RowRun; initialInputs: Record<string, unknown> }>): Promise<void> {
      if (rows.length === 0) return;
      const runs: RunDoc[] = rows.map(({ run, initialInputs }) => ({
        _id: run.runId, seq: base.seq, workflow_id: base.workflowId, workflow_version_id: base.workflowVersionId, status: run.status,
        start_time: run.startTime, end_time: run.endTime, initial_inputs: toJsonText(initialInputs), outputs: toJsonText(run.outputsByTitle),
        parent_run_id: base.parentRunId, run_type: 'batch', output_file_id: null, input_dataset_id: base.datasetId, message: run.message,
        rows_total: null, rows_done: null, rows_failed: null,
      }));
      // Tasks before runs (as every run save does): a reader that finds the run finds its tasks.
      await insertIgnoringDuplicates(RunTasks, rows.map(({ run }) => ({ _id: run.runId, tasks: toJsonText(run.tasks), updated_at: run.endTime })));
      await insertIgnoringDuplicates(Run, runs);
    },

    /** Rows an earlier attempt of the same chunk already recorded, as output lines. */
    async endedOutcomes(runIds: string[]): Promise<Map<string, RowOutcome>> {
      const found = await Run.find({ _id: trusted({ $in: runIds }) }, { status: 1, message: 1 }).lean<Array<Pick<RunDoc, '_id' | 'status' | 'message'>>>();
      const tasks = await RunTasks.find({ _id: trusted({ $in: found.map((r) => r._id) }) }).lean<Array<{ _id: string; tasks: string }>>();
      const tasksById = new Map(tasks.map((t) => [t._id, fromJsonText<TaskRecord[]>(t.tasks) ?? []]));
      return new Map(found.map((r) => [r._id, outcomeOf(r._id, r.status, r.message ?? null, tasksById.get(r._id) ?? [])]));
    },
  };
}

export function rowOutcome(run: RowRun): RowOutcome {
  return run.status === 'COMPLETED' ? { ok: true, outputsById: run.outputsById } : { ok: false, error: run.message ?? run.status, runId: run.runId };
}

function outcomeOf(runId: string, status: string, message: string | null, tasks: TaskRecord[]): RowOutcome {
  if (status !== 'COMPLETED') return { ok: false, error: message ?? status, runId };
  const outputsById: Record<string, NodeOutput> = {};
  for (const t of tasks) if (t.status === 'COMPLETED' && t.outputs && Object.keys(t.outputs).length > 0) outputsById[t.node_id] = t.outputs;
  return { ok: true, outputsById };
}

/** An unordered bulk insert where a document already there (a retried write) is not an error. */
async function insertIgnoringDuplicates(model: Models['Run'] | Models['RunTasks'], docs: object[]): Promise<void> {
  try {
    await (model as Models['RunTasks']).insertMany(docs, { ordered: false, lean: true });
  } catch (err) {
    const writeErrors = (err as { writeErrors?: unknown[] }).writeErrors;
    const all = Array.isArray(writeErrors) && writeErrors.length > 0 ? writeErrors : [err];
    if (!all.every((e) => isDuplicateKeyError((e as { err?: unknown }).err ?? e))) throw err;
  }
}
