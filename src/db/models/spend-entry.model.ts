import { Schema, type InferSchemaType } from 'mongoose';

/**
 * What one node execution's model calls cost, written as the execution ends (`_id` names the
 * execution, so a retried write counts it once): what budgets measure spending against, with no
 * wait for the task's end (the ledger, usage_records, is written then).
 */
export const spendEntrySchema = new Schema(
  {
    _id: { type: String, required: true },
    workflow_id: { type: String, required: true },
    run_id: { type: String, required: true },
    cost_nano_usd: { type: Number, required: true },
    at: { type: Date, required: true },
  },
  { collection: 'spend_entries', versionKey: false },
);
spendEntrySchema.index({ run_id: 1 });
spendEntrySchema.index({ workflow_id: 1, at: 1 });

export type SpendEntryDoc = InferSchemaType<typeof spendEntrySchema> & { _id: string };
