import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * One attempt of a node that failed (Temporal then tried the node's activity again, or gave up):
 * the task of a run records only its last attempt. `_id` `<run>/<node>/<attempt>`: an attempt
 * recorded twice (its write retried) is one. Written once by the attempt itself, never updated.
 */
export const nodeAttemptSchema = new Schema(
  {
    _id: { type: String, required: true },
    run_id: { type: String, required: true, index: true },
    node_id: { type: String, required: true },
    attempt: { type: Number, required: true },
    /** ISO 8601; null when the attempt's worker was lost before it could say (the next attempt records it). */
    start_time: { type: String, default: null },
    end_time: { type: String, required: true },
    error: { type: String, required: true },
  },
  { collection: 'node_attempts', versionKey: false },
);

export type NodeAttemptDoc = InferSchemaType<typeof nodeAttemptSchema> & { _id: string } & WorkspaceOwnedFields;

/**
 * A run one of whose nodes had a failed attempt (`_id` the run's): a read of a run looks its
 * attempts up only then, each by `_id`. FerretDB v1 scans a whole collection for any filter but
 * `_id`, so finding them by `run_id` made every read of any run cost in proportion to every run's
 * failed attempts. Inserted before the run's first attempt record, never updated.
 */
export const nodeAttemptRunSchema = new Schema(
  { _id: { type: String, required: true } },
  {
    collection: 'node_attempt_runs',
    versionKey: false,
  },
);

export type NodeAttemptRunDoc = { _id: string } & WorkspaceOwnedFields;
