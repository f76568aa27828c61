import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

const message = new Schema(
  {
    id: { type: String, required: true },
    /** `{role, content}` as JSON text (PySpur's free-form message content). */
    content: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { _id: false },
);

/**
 * One chat turn of a session: the user message and the assistant's answer of one run. The `_id`
 * is `<sessionId>:<runId>`, so a retried append is a duplicate key, never a second turn, and no
 * session document is ever updated by concurrent runs (FerretDB v1 has no transactions).
 * Turns are listed in run order (`run_seq`, then `run_id`), not in completion order.
 */
export const sessionTurnSchema = new Schema(
  {
    _id: { type: String, required: true },
    session_id: { type: String, required: true },
    run_id: { type: String, required: true },
    run_seq: { type: Number, required: true },
    user: { type: message, required: true },
    assistant: { type: message, required: true },
  },
  { collection: 'session_turns', versionKey: false },
);
sessionTurnSchema.index({ session_id: 1, run_seq: 1 });

export type SessionTurnDoc = InferSchemaType<typeof sessionTurnSchema> & { _id: string } & WorkspaceOwnedFields;
