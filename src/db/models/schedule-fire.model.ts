import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * What keeps a schedule's delete and its fires' recordings apart (db/schedule-fires.ts): a fire
 * recording its run (`_id` `<fire key>:<attempt>`, `closing: false`) or a schedule being deleted
 * (`_id` `closing:<schedule>`, `closing: true`). Only inserted and deleted, never updated: inserts
 * and deletes are atomic on FerretDB v1, whose updates are read-then-write.
 */
export const scheduleFireSchema = new Schema(
  {
    _id: { type: String, required: true },
    schedule_id: { type: String, required: true },
    closing: { type: Boolean, required: true },
    created_at: { type: Date, required: true },
  },
  { collection: 'schedule_fires', versionKey: false },
);
scheduleFireSchema.index({ schedule_id: 1 });

export type ScheduleFireDoc = InferSchemaType<typeof scheduleFireSchema> & { _id: string } & WorkspaceOwnedFields;
