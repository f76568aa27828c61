import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

export const APPROVAL_DELIVERY_STATUSES = ['pending', 'sent', 'failed', 'skipped'] as const;

/**
 * One message with approval links (`<pauseId>:<notice>:<n>`): to whom, through which channel,
 * and how it went. Its delivery workflow's activities are the only writers.
 */
export const approvalDeliverySchema = new Schema(
  {
    _id: { type: String, required: true },
    run_id: { type: String, required: true },
    pause_id: { type: String, required: true },
    /** notify, remind or escalate. */
    notice: { type: String, required: true },
    channel: { type: String, required: true },
    to: { type: String, required: true },
    user_id: { type: String, required: true },
    status: { type: String, enum: APPROVAL_DELIVERY_STATUSES, required: true },
    attempts: { type: Number, default: 0 },
    /** The last attempt's error; why a failed delivery stopped. */
    error: { type: String, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'approval_deliveries', versionKey: false },
);
approvalDeliverySchema.index({ run_id: 1, created_at: 1 });

export type ApprovalDeliveryDoc = InferSchemaType<typeof approvalDeliverySchema> & {
  _id: string;
} & WorkspaceOwnedFields;

/**
 * A pause with approval messages (`_id` the pause's; owner-marks.ts): a read of a pause looks its
 * messages up only then, each by `_id`. Inserted before the pause's first message record, never updated.
 */
export const approvalDeliveryPauseSchema = new Schema(
  {
    _id: { type: String, required: true },
    run_id: { type: String, required: true },
  },
  { collection: 'approval_delivery_pauses', versionKey: false },
);

export type ApprovalDeliveryPauseDoc = { _id: string; run_id: string } & WorkspaceOwnedFields;
