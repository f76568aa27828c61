import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';
import { storedCallbackField } from './stored-callback.schema';

/**
 * A webhook delivery accepted while its workflow was paused, kept until the workflow is resumed:
 * its run's inputs as the delivery made them, and the idempotency record its run will claim
 * (`_id` is that record's id, so the delivery becomes its run once, whoever releases it).
 */
export const heldDeliverySchema = new Schema(
  {
    _id: { type: String, required: true },
    /** Breaks ties between deliveries received in the same millisecond by one process. */
    seq: { type: Number, required: true },
    workflow_id: { type: String, required: true },
    trigger_id: { type: String, required: true },
    /** The trigger's dedupe header's value, when it has one. */
    delivery_id: { type: String, default: null },
    /** The scope of the idempotency record its run claims (db/idempotency-keys.ts KeyScope, less the principal). */
    key_scope: {
      type: new Schema(
        {
          route: { type: String, required: true },
          target: { type: String, required: true },
          key: { type: String, required: true },
        },
        { _id: false },
      ),
      required: true,
    },
    body_hash: { type: String, required: true },
    /** The run's initial inputs as JSON text (db/json-text.ts). */
    initial_inputs: { type: String, required: true },
    callback: storedCallbackField,
    respond: { type: String, enum: ['accepted', 'result'], required: true },
    received_at: { type: Date, required: true },
  },
  { collection: 'held_deliveries', versionKey: false },
);
heldDeliverySchema.index({ workflow_id: 1, received_at: 1, seq: 1 });

export type HeldDeliveryDoc = InferSchemaType<typeof heldDeliverySchema> & { _id: string } & WorkspaceOwnedFields;
