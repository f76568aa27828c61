import { Schema, type InferSchemaType } from 'mongoose';
import { TASK_STATUSES } from '../../../temporal/shared/statuses';

/** One task per top-level node of a run; `_id` is `<runId>:<nodeId>` so every write is idempotent. */
export const taskSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** PySpur's `T<n>`, reserved by the api when the run is created. */
    id: { type: String, required: true },
    run_id: { type: String, required: true },
    node_id: { type: String, required: true },
    /** Position of the node in the definition: tasks are listed in that order. */
    index: { type: Number, required: true },
    status: { type: String, enum: TASK_STATUSES, required: true },
    inputs: { type: String, default: null },
    outputs: { type: String, default: null },
    error: { type: String, default: null },
    start_time: { type: Date, default: null },
    end_time: { type: Date, default: null },
    subworkflow: { type: String, default: null },
    subworkflow_output: { type: String, default: null },
  },
  { collection: 'tasks', versionKey: false },
);
taskSchema.index({ run_id: 1, index: 1 });

export type TaskDoc = InferSchemaType<typeof taskSchema> & { _id: string };
