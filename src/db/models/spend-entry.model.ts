import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * What one answered model call cost (written as the answer arrives, whatever then happens to its
 * node), or, while a budgeted call is out, its hold: the call's worst case, counted as spent until
 * the answer settles it to the actual cost. Holds of one workflow are numbered (`seq`, `_id`
 * `<workflow>#<seq>`): a hold is taken by inserting the next number, so two processes checking the
 * same budget at once cannot both take it on the same reading of what is spent (inserts are atomic
 * on FerretDB v1 too, whose updates are read-then-write). Budgets measure spending here, with no
 * wait for the task's end (the usage ledger, usage_records, is written then).
 */
export const spendEntrySchema = new Schema(
  {
    _id: { type: String, required: true },
    workflow_id: { type: String, required: true },
    run_id: { type: String, required: true },
    cost_nano_usd: { type: Number, required: true },
    at: { type: Date, required: true },
    /** Holds only: the hold's number among the workflow's holds. */
    seq: { type: Number, required: false },
    /** Holds only: the call it holds for (one per call, whatever retries the hold's write). */
    call_id: { type: String, required: false },
    /** True while the hold's call is out (its cost is then the worst case). */
    held: { type: Boolean, required: false },
  },
  { collection: 'spend_entries', versionKey: false },
);
spendEntrySchema.index({ run_id: 1 });
spendEntrySchema.index({ workflow_id: 1, at: 1 });
spendEntrySchema.index({ workflow_id: 1, seq: -1 });
spendEntrySchema.index({ call_id: 1 }, { sparse: true });

export type SpendEntryDoc = InferSchemaType<typeof spendEntrySchema> & { _id: string } & WorkspaceOwnedFields;
