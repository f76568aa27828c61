import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * All tasks of one run in one document (`_id` = run id), `tasks` as JSON text of TaskRecord[], once
 * they are too large to stay on the run's own document (src/db/runs/run-task-reads.ts). Written
 * only by the run's workflow (and the api's close of a run without one); read with an `_id` lookup.
 */
export const runTasksSchema = new Schema(
  {
    _id: { type: String, required: true },
    tasks: { type: String, required: true },
    updated_at: { type: Date, required: true },
    /** Counts the writes of a workflow's saves that wrote without reading (run-projection.ts); absent after any other write. */
    v: { type: Number },
  },
  { collection: 'run_tasks', versionKey: false },
);

export type RunTasksDoc = InferSchemaType<typeof runTasksSchema> & { _id: string } & WorkspaceOwnedFields;
