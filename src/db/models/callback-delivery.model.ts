import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

export const CALLBACK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

const attemptSchema = new Schema(
  {
    attempt: { type: Number, required: true },
    time: { type: Date, required: true },
    /** The receiver's answer; null when there was none (network error, refused address). */
    status_code: { type: Number, default: null },
    error: { type: String, default: null },
    duration_ms: { type: Number, default: null },
  },
  { _id: false },
);

/**
 * One callback delivery (`<runId>:<event>:<n>`) and its attempts. Its delivery workflow's
 * activities are the only writers, one attempt after another.
 */
export const callbackDeliverySchema = new Schema(
  {
    _id: { type: String, required: true },
    run_id: { type: String, required: true },
    event: { type: String, required: true },
    url: { type: String, required: true },
    status: { type: String, enum: CALLBACK_DELIVERY_STATUSES, required: true },
    /** Why a failed delivery stopped (the last error, a refusal, the time limit). */
    reason: { type: String, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    attempts: { type: [attemptSchema], default: [] },
  },
  { collection: 'callback_deliveries', versionKey: false },
);
callbackDeliverySchema.index({ run_id: 1, created_at: 1 });

export type CallbackDeliveryDoc = InferSchemaType<typeof callbackDeliverySchema> & {
  _id: string;
} & WorkspaceOwnedFields;
export type CallbackAttemptDoc = InferSchemaType<typeof attemptSchema>;
