import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

export const workflowSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** Numeric part of the id: breaks ties between workflows created in the same millisecond. */
    seq: { type: Number, required: true },
    name: { type: String, required: true },
    description: { type: String, default: null },
    /** The definition as JSON text (see db/json-text.ts). */
    definition: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    /** Days its finished runs are kept after they end (PUT /wf/{id}/retention/); null: the installation's SPUR_RUN_RETENTION_DAYS. */
    run_retention_days: { type: Number, default: null },
  },
  { collection: 'workflows', versionKey: false },
);
/** Unique within a workspace: another workspace may use the same name. */
workflowSchema.index({ workspace_id: 1, name: 1 }, { unique: true });

export type WorkflowDoc = InferSchemaType<typeof workflowSchema> & { _id: string } & WorkspaceOwnedFields;
