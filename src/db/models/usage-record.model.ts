import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * The ledger: one model's share of one task's usage (`_id` = run, task and model), as the task
 * records it. Kept apart from runs, so spend stays counted when runs are deleted.
 */
export const usageRecordSchema = new Schema(
  {
    _id: { type: String, required: true },
    run_id: { type: String, required: true },
    workflow_id: { type: String, required: true },
    /** Who started the run: `key:<12 hex>`, `session`, `schedule`, `webhook`, or `none` (no keys set). */
    api_key: { type: String, required: true },
    node_id: { type: String, required: true },
    model: { type: String, required: true },
    prompt_tokens: { type: Number, required: true },
    completion_tokens: { type: Number, required: true },
    calls: { type: Number, required: true },
    /** Null: the model had no known price. */
    cost_nano_usd: { type: Number, required: false, default: null },
    /** When the task ended. */
    at: { type: Date, required: true },
  },
  { collection: 'usage_records', versionKey: false },
);
usageRecordSchema.index({ at: 1 });

export type UsageRecordDoc = InferSchemaType<typeof usageRecordSchema> & { _id: string } & WorkspaceOwnedFields;
