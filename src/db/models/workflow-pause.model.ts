import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A workflow's pause (`_id`: the workflow's id): while it exists no run of the workflow starts,
 * and its webhook deliveries are held (`hold_webhooks`) or refused. Inserted to pause, deleted to
 * resume, never updated: a second pause finds the first by its `_id`.
 */
export const workflowPauseSchema = new Schema(
  {
    _id: { type: String, required: true },
    reason: { type: String, default: null },
    since: { type: Date, required: true },
    /** Who paused it, as runs name who started them (src/runs/run-caller.ts); null: no caller known. */
    by: { type: String, default: null },
    hold_webhooks: { type: Boolean, required: true },
  },
  { collection: 'workflow_pauses', versionKey: false },
);

export type WorkflowPauseDoc = InferSchemaType<typeof workflowPauseSchema> & { _id: string } & WorkspaceOwnedFields;
