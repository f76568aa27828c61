import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * All tasks of one run in one document (`_id` = run id), `tasks` as JSON text of TaskRecord[].
 * Written by the run's workflow, and by a node's activity showing it RUNNING (StartSave) only
 * while no save of the workflow's came after the one it follows; read with a single `_id` lookup.
 */
export const runTasksSchema = new Schema(
  {
    _id: { type: String, required: true },
    tasks: { type: String, required: true },
    updated_at: { type: Date, required: true },
    /** The label of the write that wrote `tasks` (ProgressSave.tasks.writer); absent in older documents. */
    writer: { type: String, required: false },
  },
  { collection: 'run_tasks', versionKey: false },
);

export type RunTasksDoc = InferSchemaType<typeof runTasksSchema> & { _id: string } & WorkspaceOwnedFields;
