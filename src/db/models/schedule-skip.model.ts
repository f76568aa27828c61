import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A fire of a schedule that started no run because its workflow was paused (`_id`: the fire's
 * key, so a retried fire records its skip once). Only a schedule's latest few are kept.
 */
export const scheduleSkipSchema = new Schema(
  {
    _id: { type: String, required: true },
    schedule_id: { type: String, required: true },
    scheduled_time: { type: Date, required: true },
    reason: { type: String, required: true },
    skipped_at: { type: Date, required: true },
  },
  { collection: 'schedule_skips', versionKey: false },
);
scheduleSkipSchema.index({ schedule_id: 1, scheduled_time: -1 });

export type ScheduleSkipDoc = InferSchemaType<typeof scheduleSkipSchema> & { _id: string } & WorkspaceOwnedFields;
