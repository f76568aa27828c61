import { trusted } from 'mongoose';
import type { TaskRecord } from '../../engine/run-contract';
import { fromJsonText } from '../json-text';
import type { Models } from '../models';

/**
 * An open run's tasks (JSON text) up to this many characters live on its run document (`tasks`): a
 * save writes them in the same update as the run's status and event head, and a poll of the run
 * reads them with it. Larger ones, and every ended run's, are kept in a document of their own
 * (`run_tasks`): FerretDB v1 filters on nothing but `_id` in SQLite, so every other query on `runs`
 * (a list page, the reconciler's and retention's scans) decodes each run document whole, and an
 * installation's ended runs must not make that grow.
 */
export const TASKS_ON_RUN_MAX_CHARS = 64 * 1024;

/** Whether tasks of this JSON text are kept on their open run's document. */
export const tasksFitRun = (json: string): boolean => json.length <= TASKS_ON_RUN_MAX_CHARS;

/** A run document's `tasks`: its tasks as JSON text, or null (kept in `run_tasks`, or none yet). */
export interface TasksField {
  _id: string;
  tasks?: string | null;
}

/** Reads of runs' tasks, wherever their saves put them: the run document first, then `run_tasks`. */
export function createRunTaskReads(models: Models) {
  const { Run, RunTasks } = models;

  /** The tasks kept in `run_tasks`; a run without a document there has none. */
  async function apart(runIds: readonly string[]): Promise<Map<string, TaskRecord[]>> {
    if (runIds.length === 0) return new Map();
    // One `_id` lookup each, in parallel: FerretDB pushes only those down.
    const docs = await Promise.all(runIds.map((id) => RunTasks.findById(id).lean<{ _id: string; tasks: string }>()));
    return new Map(docs.flatMap((d) => (d ? [[d._id, fromJsonText<TaskRecord[]>(d.tasks) ?? []] as const] : [])));
  }

  /** Of runs read with their `tasks` field: those kept apart are read beside them. */
  async function ofDocs(runs: readonly TasksField[]): Promise<Map<string, TaskRecord[]>> {
    const found = new Map<string, TaskRecord[]>();
    for (const run of runs)
      if (typeof run.tasks === 'string') found.set(run._id, fromJsonText<TaskRecord[]>(run.tasks) ?? []);
    for (const [id, tasks] of await apart(runs.filter((r) => !found.has(r._id)).map((r) => r._id)))
      found.set(id, tasks);
    return found;
  }

  return {
    ofDocs,
    /** Of runs by id (a run unknown or without tasks is left out). */
    async ofIds(runIds: readonly string[]): Promise<Map<string, TaskRecord[]>> {
      if (runIds.length === 0) return new Map();
      return ofDocs(await Run.find({ _id: trusted({ $in: [...runIds] }) }, { tasks: 1 }).lean<TasksField[]>());
    },
    async of(runId: string): Promise<TaskRecord[]> {
      const run = await Run.findById(runId, { tasks: 1 }).lean<TasksField>();
      return run ? ((await ofDocs([run])).get(runId) ?? []) : [];
    },
  };
}

export type RunTaskReads = ReturnType<typeof createRunTaskReads>;
