import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/** A workflow's spending limits on model calls (`_id`: the workflow id), in USD. */
export const workflowBudgetSchema = new Schema(
  {
    _id: { type: String, required: true },
    per_run_usd: { type: Number, required: false, default: null },
    per_day_usd: { type: Number, required: false, default: null },
    per_month_usd: { type: Number, required: false, default: null },
    on_exceed: { type: String, required: true, enum: ['pause', 'fail'] },
    updated_at: { type: Date, required: true },
  },
  { collection: 'workflow_budgets', versionKey: false },
);

export type WorkflowBudgetDoc = InferSchemaType<typeof workflowBudgetSchema> & { _id: string } & WorkspaceOwnedFields;
