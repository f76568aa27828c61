import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * How a WaitForCallbackNode's wait ended (`_id` `<run id>:<node id>`): `delivered` with the call's
 * body, or `expired` (its timeout came first). Inserted once, never updated: whichever of the call
 * and the timeout inserts first wins, and the `_id` index refuses the other, so a callback is used
 * once. No document: the callback is still open.
 */
export const inboundCallbackSchema = new Schema(
  {
    _id: { type: String, required: true },
    run_id: { type: String, required: true, index: true },
    node_id: { type: String, required: true },
    status: { type: String, enum: ['delivered', 'expired'], required: true },
    /** The call's JSON body, as text (keys with `.` or `$` round-trip); null when expired. */
    body: { type: String, default: null },
    at: { type: Date, required: true },
  },
  { collection: 'inbound_callbacks', versionKey: false },
);

export type InboundCallbackDoc = InferSchemaType<typeof inboundCallbackSchema> & { _id: string } & WorkspaceOwnedFields;
