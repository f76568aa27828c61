import { Schema, type InferSchemaType } from 'mongoose';

const breakerRuleSchema = new Schema(
  {
    failures: { type: Number, required: true },
    window_seconds: { type: Number, required: true },
    open_seconds: { type: Number, required: true },
  },
  { _id: false },
);

/** Times in ms since the epoch, as the limit workflow keeps them. */
const breakerStateSchema = new Schema(
  {
    state: { type: String, required: true },
    since: { type: Number, required: true },
    opened_by: { type: String, required: false, default: null },
    failure_times: { type: [Number], required: true },
  },
  { _id: false },
);

/**
 * A limit on model requests (`_id`: `openai` or `openai/gpt-4o-mini`, prefixed by its scope outside
 * `default`: src/usage/provider-limits.ts).
 */
export const providerLimitSchema = new Schema(
  {
    _id: { type: String, required: true },
    max_concurrent: { type: Number, required: false, default: null },
    requests_per_minute: { type: Number, required: false, default: null },
    tokens_per_minute: { type: Number, required: false, default: null },
    /** The breaker's rule ({failures, window_seconds, open_seconds}), null without one. */
    breaker: { type: breakerRuleSchema, required: false, default: null },
    /** The breaker's state as its limit workflow last recorded it (a BreakerRecord); null before it ever changed. */
    breaker_state: { type: breakerStateSchema, required: false, default: null },
    /** Whose limit it is: a workspace's id, or `fleet` (across workspaces); missing on those of before workspaces (default's). */
    workspace_id: { type: String, required: false },
    updated_at: { type: Date, required: true },
  },
  { collection: 'provider_limits', versionKey: false },
);

export type ProviderLimitDoc = InferSchemaType<typeof providerLimitSchema> & { _id: string };
