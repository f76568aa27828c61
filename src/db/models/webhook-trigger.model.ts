import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';
import { storedCallbackField } from './stored-callback.schema';

/**
 * A webhook trigger (`TR<n>`): a secret URL that starts a run of its workflow. The URL's token is
 * the credential, so only its SHA-256 is looked up (`token_hash`, unique) and the token itself is
 * kept sealed, to show the URL again; the HMAC secret is sealed too and never returned.
 */
export const webhookTriggerSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    workflow_id: { type: String, required: true },
    name: { type: String, required: true },
    /** Hex SHA-256 of the URL token: what a delivery is found by. */
    token_hash: { type: String, required: true },
    /** The token, sealed (SecretBox, bound to the trigger's id). */
    token_sealed: { type: String, required: true },
    /** JSON text of `{ "<input field>": "<JSON pointer>" }`, null for "the whole body" (field names may hold `.` or `$`). */
    input_mapping: { type: String, default: null },
    signature: {
      type: new Schema(
        {
          /** `hmac` (GitHub's: the body's HMAC) or `stripe` (a timestamp and the HMAC of both); older triggers lack it: hmac. */
          scheme: { type: String, enum: ['hmac', 'stripe'], default: 'hmac' },
          header: { type: String, required: true },
          algorithm: { type: String, enum: ['hmac-sha256', 'hmac-sha1'], required: true },
          prefix: { type: String, default: '' },
          /** `stripe`: how far a delivery's timestamp may be from now, in seconds. */
          tolerance_seconds: { type: Number, default: null },
        },
        { _id: false },
      ),
      default: null,
    },
    /** The HMAC secret, sealed (SecretBox, bound to the trigger's id); null when none. */
    secret_sealed: { type: String, default: null },
    dedupe_header: { type: String, default: null },
    /** Every run it starts gets this callback (its secret sealed, as a run's). */
    callback: storedCallbackField,
    respond: { type: String, enum: ['accepted', 'result'], required: true },
    max_body_bytes: { type: Number, required: true },
    rate_per_second: { type: Number, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'webhook_triggers', versionKey: false },
);
webhookTriggerSchema.index({ token_hash: 1 }, { unique: true });
webhookTriggerSchema.index({ workflow_id: 1, seq: 1 });

export type WebhookTriggerDoc = InferSchemaType<typeof webhookTriggerSchema> & { _id: string } & WorkspaceOwnedFields;
