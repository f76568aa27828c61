import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/** A chat session (`SN<n>`) of one user with one workflow; its messages are its turns. */
export const sessionSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    user_id: { type: String, required: true },
    workflow_id: { type: String, required: true },
    external_id: { type: String, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'sessions', versionKey: false },
);
sessionSchema.index({ user_id: 1, created_at: -1 });
sessionSchema.index({ workflow_id: 1, created_at: -1 });

export type SessionDoc = InferSchemaType<typeof sessionSchema> & { _id: string } & WorkspaceOwnedFields;
