import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A run whose cancel the api has asked Temporal for (`_id` the run's). A node running as a local
 * activity hears of its run's cancel only when its workflow task next completes, up to 8 s later;
 * meanwhile it looks for this mark (temporal/activities/run-cancel-watch.ts). Apart from the run's
 * document, whose one writer is its workflow; inserted once, never updated, removed with the run.
 */
export const runCancelRequestSchema = new Schema(
  {
    _id: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { collection: 'run_cancel_requests', versionKey: false },
);

export type RunCancelRequestDoc = InferSchemaType<typeof runCancelRequestSchema> & {
  _id: string;
} & WorkspaceOwnedFields;
