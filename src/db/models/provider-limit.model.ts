import { Schema, type InferSchemaType } from 'mongoose';

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
    /** Whose limit it is: a workspace's id, or `fleet` (across workspaces); missing on those of before workspaces (default's). */
    workspace_id: { type: String, required: false },
    updated_at: { type: Date, required: true },
  },
  { collection: 'provider_limits', versionKey: false },
);

export type ProviderLimitDoc = InferSchemaType<typeof providerLimitSchema> & { _id: string };
