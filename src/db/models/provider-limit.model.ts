import { Schema, type InferSchemaType } from 'mongoose';

/** An operator's fleet-wide limit on model requests (`_id`: `openai` or `openai/gpt-4o-mini`). */
export const providerLimitSchema = new Schema(
  {
    _id: { type: String, required: true },
    max_concurrent: { type: Number, required: false, default: null },
    requests_per_minute: { type: Number, required: false, default: null },
    tokens_per_minute: { type: Number, required: false, default: null },
    updated_at: { type: Date, required: true },
  },
  { collection: 'provider_limits', versionKey: false },
);

export type ProviderLimitDoc = InferSchemaType<typeof providerLimitSchema> & { _id: string };
