import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/** A chat user (PySpur's `/user/`): `U<n>`, one per `external_id`. */
export const userSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    external_id: { type: String, required: true },
    /** JSON text (db/json-text.ts): free-form, may hold keys FerretDB refuses. */
    user_metadata: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'users', versionKey: false },
);
/** Unique within a workspace: another workspace may use the same external id. */
userSchema.index({ workspace_id: 1, external_id: 1 }, { unique: true });

export type UserDoc = InferSchemaType<typeof userSchema> & { _id: string } & WorkspaceOwnedFields;
