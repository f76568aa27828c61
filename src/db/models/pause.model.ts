import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/** One record per pause of a run, `_id` `<runId>:<nodeId>:<n>`; resume fields filled on action. */
export const pauseSchema = new Schema(
  {
    _id: { type: String, required: true },
    run_id: { type: String, required: true },
    node_id: { type: String, required: true },
    pause_message: { type: String, default: null },
    pause_time: { type: Date, required: true },
    resume_time: { type: Date, default: null },
    resume_user_id: { type: String, default: null },
    resume_action: { type: String, enum: ['APPROVE', 'DECLINE', 'OVERRIDE', null], default: null },
    /** JSON text: the node's input when it paused. */
    input_data: { type: String, default: null },
    comments: { type: String, default: null },
    /** JSON text: every decision (who, what, when, through which channel), the settling one last. */
    decisions: { type: String, default: null },
  },
  { collection: 'pauses', versionKey: false },
);
pauseSchema.index({ run_id: 1, pause_time: -1 });

export type PauseDoc = InferSchemaType<typeof pauseSchema> & { _id: string } & WorkspaceOwnedFields;
