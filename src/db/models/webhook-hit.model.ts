import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * One of a trigger's request slots in one rate window (`_id` `<trigger>:<window start>:<slot>`): a
 * request is let through when it inserts a free slot, in whichever api process it arrives (the
 * `_id` index makes each slot taken once; inserts are atomic on FerretDB v1 too, where `$inc` is
 * read-then-write and would lose counts).
 */
export const webhookHitSchema = new Schema(
  {
    _id: { type: String, required: true },
    trigger_id: { type: String, required: true },
    /** Start of the rate window (ms since the epoch, a multiple of the window's length). */
    window: { type: Number, required: true },
    /** MongoDB's TTL monitor removes the hit after this; nothing reads it once its window is over. */
    expires_at: { type: Date, required: true },
  },
  { collection: 'webhook_hits', versionKey: false },
);
webhookHitSchema.index({ trigger_id: 1, window: 1 });

export type WebhookHitDoc = InferSchemaType<typeof webhookHitSchema> & { _id: string } & WorkspaceOwnedFields;
