import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';
import { RUN_ACTION_KINDS, RUN_ACTION_OUTCOMES, RUN_ACTION_STATUSES } from '../../contracts/run-action-contract';

/**
 * A bulk action over runs (`RA<n>`): what it does, the filter it was made with, who made it and
 * how far it got. The runs it matched are fixed at creation, one item each (below).
 */
export const runActionSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    action: { type: String, enum: RUN_ACTION_KINDS, required: true },
    /** JSON text: the filter as the client sent it (validated). */
    filter: { type: String, required: true },
    matched: { type: Number, required: true },
    status: { type: String, enum: RUN_ACTION_STATUSES, required: true },
    /** Runs acted on (or with nothing to do) and runs that failed: set from the items after every page. */
    done: { type: Number, default: 0 },
    failed: { type: Number, default: 0 },
    /** Who made it, as runs record their starter (src/runs/run-caller.ts): a retry's or rerun's new runs say so too. */
    started_by: { type: String, default: null },
    started_by_name: { type: String, default: null },
    /** JSON text: who decides an approve's or decline's pauses (contracts' RunActionDecider); null for the other actions. */
    decider: { type: String, default: null },
    created_at: { type: Date, required: true },
    ended_at: { type: Date, default: null },
    /**
     * False until every item is stored: an action its api died recording is never acted on (the
     * reconciler ends it FAILED, nothing done). Absent on actions made before it existed: recorded.
     */
    recorded: { type: Boolean, default: true },
  },
  { collection: 'run_actions', versionKey: false },
);

export type RunActionDoc = InferSchemaType<typeof runActionSchema> & { _id: string } & WorkspaceOwnedFields;

/** One matched run of an action (`_id` `<action id>:<position>`): how it stands. */
export const runActionItemSchema = new Schema(
  {
    _id: { type: String, required: true },
    action_id: { type: String, required: true },
    position: { type: Number, required: true },
    run_id: { type: String, required: true },
    outcome: { type: String, enum: RUN_ACTION_OUTCOMES, required: true },
    /** A retry's or rerun's new run. */
    new_run_id: { type: String, default: null },
    error: { type: String, default: null },
    acted_at: { type: Date, default: null },
  },
  { collection: 'run_action_items', versionKey: false },
);
runActionItemSchema.index({ action_id: 1, position: 1 });

export type RunActionItemDoc = InferSchemaType<typeof runActionItemSchema> & { _id: string } & WorkspaceOwnedFields;
