import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

export const workflowVersionSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    workflow_id: { type: String, required: true },
    version: { type: Number, required: true },
    name: { type: String, required: true },
    description: { type: String, default: null },
    definition: { type: String, required: true },
    definition_hash: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'workflow_versions', versionKey: false },
);
// Two runs starting at once must not mint the same version number or two versions of one hash.
workflowVersionSchema.index({ workflow_id: 1, version: 1 }, { unique: true });
workflowVersionSchema.index({ workflow_id: 1, definition_hash: 1 }, { unique: true });

export type WorkflowVersionDoc = InferSchemaType<typeof workflowVersionSchema> & { _id: string } & WorkspaceOwnedFields;
