import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * The ledger's records of one deleted run (retention, or DELETE /run/{id}/), summed per UTC day
 * and model: what the usage answers keep counting once the run is gone. It names no run: its `_id`
 * is a keyed digest of the run's id (src/runs/run-eraser.ts), so a deletion repeated after a crash
 * finds the rollup it wrote instead of counting the run twice, and each rollup still counts as one
 * run in `runs`.
 */
export const usageRollupSchema = new Schema(
  {
    _id: { type: String, required: true },
    workflow_id: { type: String, required: true },
    api_key: { type: String, required: true },
    days: {
      type: [
        {
          _id: false,
          /** 00:00 UTC of the day its tasks ended. */
          day: { type: Date, required: true },
          model: { type: String, required: true },
          prompt_tokens: { type: Number, required: true },
          completion_tokens: { type: Number, required: true },
          calls: { type: Number, required: true },
          /** Of the priced calls only. */
          cost_nano_usd: { type: Number, required: true },
          unpriced_calls: { type: Number, required: true },
        },
      ],
      default: [],
    },
  },
  { collection: 'usage_rollups', versionKey: false },
);

export interface UsageDay {
  day: Date;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  calls: number;
  cost_nano_usd: number;
  unpriced_calls: number;
}

export type UsageRollupDoc = Omit<InferSchemaType<typeof usageRollupSchema>, 'days'> & {
  _id: string;
  days: UsageDay[];
} & WorkspaceOwnedFields;
