import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/** A comparison (`EC<n>`): two eval runs of one suite, one per workflow version, over the same rows. */
export const evalComparisonSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    suite_id: { type: String, required: true },
    workflow_id: { type: String, required: true },
    versions: { type: [Number], required: true },
    eval_run_ids: { type: [String], required: true },
    created_at: { type: Date, required: true },
  },
  { collection: 'eval_comparisons', versionKey: false },
);

export type EvalComparisonDoc = InferSchemaType<typeof evalComparisonSchema> & { _id: string } & WorkspaceOwnedFields;
