import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';
import { storedCallbackField } from './stored-callback.schema';

import { SCHEDULE_OVERLAPS, SCHEDULE_VERSIONS } from '../../contracts/schedule-contract';

/**
 * A Spur schedule: what its runs start with. Its timing lives in the Temporal Schedule of the same
 * id (the api keeps both in step); its fires read this document when they record their run.
 */
export const scheduleSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    workflow_id: { type: String, required: true },
    cron: { type: String, default: null },
    interval_seconds: { type: Number, default: null },
    timezone: { type: String, required: true },
    /** JSON text (db/json-text.ts), as every user payload. */
    initial_inputs: { type: String, required: true },
    overlap: { type: String, enum: SCHEDULE_OVERLAPS, required: true },
    catchup_window_seconds: { type: Number, required: true },
    paused: { type: Boolean, required: true },
    version: { type: String, enum: SCHEDULE_VERSIONS, required: true },
    /** With `version: pinned`: the version the workflow had when the schedule was saved. */
    pinned_version_id: { type: String, default: null },
    note: { type: String, default: null },
    /** Every run it starts gets this callback (its secret sealed, as a run's). */
    callback: storedCallbackField,
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'schedules', versionKey: false },
);
scheduleSchema.index({ workflow_id: 1, seq: 1 });

export type ScheduleDoc = InferSchemaType<typeof scheduleSchema> & { _id: string } & WorkspaceOwnedFields;
