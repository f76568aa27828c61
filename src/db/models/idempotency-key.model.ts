import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * One accepted `Idempotency-Key`: `_id` is the digest of its scope (caller, workspace, route,
 * workflow or run, key), so the collection's `_id` index is the unique index that lets only one
 * request claim it. The first request inserts it naming the run it recorded; only that request
 * writes it afterwards.
 */
export const idempotencyKeySchema = new Schema(
  {
    _id: { type: String, required: true },
    /** The client's key and where it applies, for messages and operators. */
    key: { type: String, required: true },
    route: { type: String, required: true },
    target: { type: String, required: true },
    /** sha256 of the canonical JSON of the request (query and body): a replay must match it. */
    body_hash: { type: String, required: true },
    run_id: { type: String, required: true },
    created_at: { type: Date, required: true },
    /** MongoDB's TTL monitor removes the record after this; the api also treats it as gone from then. */
    expires_at: { type: Date, required: true },
    /** Set once the run is started (the action applied): until then a replay waits for the first request. */
    accepted_at: { type: Date, default: null },
    /** The first request's answer, replayed as is (a blocking run's replay waits for its run instead). */
    answer_status: { type: Number, default: null },
    /** JSON text (db/json-text.ts): answers carry user JSON. */
    answer_body: { type: String, default: null },
  },
  { collection: 'idempotency_keys', versionKey: false },
);

export type IdempotencyKeyDoc = InferSchemaType<typeof idempotencyKeySchema> & { _id: string } & WorkspaceOwnedFields;
