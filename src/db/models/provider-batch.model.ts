import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * One provider batch of a provider-batch run: the model calls of one node in one round, sent as
 * one batch. `_id` `<batch run>/<node>/<round>`: a create tried again after a crash finds it.
 * `creating_since` is set before the provider is asked, so a retry knows to look for a batch the
 * provider made but whose id was never stored.
 */
export const providerBatchSchema = new Schema(
  {
    _id: { type: String, required: true },
    batch_run_id: { type: String, required: true, index: true },
    node_id: { type: String, required: true },
    round: { type: Number, required: true },
    provider: { type: String, required: true },
    requests: { type: Number, required: true },
    creating_since: { type: Date, required: true },
    batch_id: { type: String, default: null },
    /** The provider's word for its state, as last polled. */
    status: { type: String, default: 'creating' },
    succeeded: { type: Number, default: 0 },
    failed: { type: Number, default: 0 },
    created_at: { type: Date, default: null },
    ended_at: { type: Date, default: null },
  },
  { collection: 'provider_batches', versionKey: false },
);

export type ProviderBatchDoc = InferSchemaType<typeof providerBatchSchema> & { _id: string } & WorkspaceOwnedFields;

/**
 * A row of a provider-batch run that holds requests at the end of a round: what its nodes returned
 * so far (`done`, not run again) and the model requests it waits to have answered (`held`, by node),
 * JSON text. `_id` `<batch run>/<row>/<round>`. Written once (FerretDB inserts are cheap, updates
 * are not); removed when the batch ends.
 */
export const providerBatchRowSchema = new Schema(
  {
    _id: { type: String, required: true },
    batch_run_id: { type: String, required: true, index: true },
    row: { type: Number, required: true },
    round: { type: Number, required: true },
    done: { type: String, default: '{}' },
    held: { type: String, default: '{}' },
  },
  { collection: 'provider_batch_rows', versionKey: false },
);

export type ProviderBatchRowDoc = InferSchemaType<typeof providerBatchRowSchema> & {
  _id: string;
} & WorkspaceOwnedFields;

/**
 * What a provider batch answered one row's request (JSON text of a BatchAnswer). `_id` `<batch
 * run>/<row>/<node>`: a node's request is held once per row. Written once; removed with the rows.
 */
export const providerBatchAnswerSchema = new Schema(
  {
    _id: { type: String, required: true },
    batch_run_id: { type: String, required: true, index: true },
    row: { type: Number, required: true },
    node_id: { type: String, required: true },
    answer: { type: String, required: true },
  },
  { collection: 'provider_batch_answers', versionKey: false },
);

export type ProviderBatchAnswerDoc = InferSchemaType<typeof providerBatchAnswerSchema> & {
  _id: string;
} & WorkspaceOwnedFields;
