import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A piece of an LLM reply a running task streamed (`task.delta`), kept only until the task has
 * ended: not part of the run's durable event stream. `_id` `<run>:<node>:<stream>:<seq>`, `stream`
 * naming one activity attempt (a retry streams anew).
 */
export const taskDeltaSchema = new Schema(
  {
    _id: { type: String, required: true },
    run_id: { type: String, required: true },
    node_id: { type: String, required: true },
    seq: { type: Number, required: true },
    text: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { collection: 'run_task_deltas', versionKey: false },
);

export type TaskDeltaDoc = InferSchemaType<typeof taskDeltaSchema> & { _id: string } & WorkspaceOwnedFields;
