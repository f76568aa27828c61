import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * One scored example (`_id` = eval run and row): written once, when its row's run has ended, so a
 * scoring pass repeated after a crash finds it and scores the row no second time.
 */
export const evalResultSchema = new Schema(
  {
    _id: { type: String, required: true },
    eval_run_id: { type: String, required: true },
    /** 0-based row of the dataset. */
    row: { type: Number, required: true },
    run_id: { type: String, required: true },
    run_status: { type: String, required: true },
    // Texts may be empty (a row that failed predicts nothing): Mongoose's `required` refuses ''.
    prompt: { type: String, default: '' },
    predicted: { type: String, default: '' },
    ground_truth: { type: String, default: '' },
    correct: { type: Boolean, required: true },
    note: { type: String, default: null },
    /** The row run's model usage plus the judge's. */
    prompt_tokens: { type: Number, required: true },
    completion_tokens: { type: Number, required: true },
    /** Null when a model had no known price. */
    cost_nano_usd: { type: Number, default: null },
    /** JSON text of `[{node_id, request}]`: what the row's nodes would have sent (a dry run); absent: nothing. */
    dry_run: { type: String, default: null },
    scored_at: { type: Date, required: true },
  },
  { collection: 'eval_results', versionKey: false },
);
evalResultSchema.index({ eval_run_id: 1, row: 1 });

export type EvalResultDoc = InferSchemaType<typeof evalResultSchema> & { _id: string } & WorkspaceOwnedFields;
