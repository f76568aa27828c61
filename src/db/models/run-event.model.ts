import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * One event of a run's stream, `_id` `<runId>:<seq>` so a reader finds the next one with an `_id`
 * lookup (the only filter FerretDB v1 pushes down). `data` is JSON text (user keys may hold `.`/`$`).
 */
export const runEventSchema = new Schema(
  {
    _id: { type: String, required: true },
    run_id: { type: String, required: true },
    seq: { type: Number, required: true },
    event: { type: String, required: true },
    data: { type: String, required: true },
    at: { type: Date, required: true },
  },
  { collection: 'run_events', versionKey: false },
);
runEventSchema.index({ run_id: 1, seq: 1 }, { unique: true });

export type RunEventDoc = InferSchemaType<typeof runEventSchema> & { _id: string } & WorkspaceOwnedFields;
