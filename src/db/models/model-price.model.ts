import { Schema, type InferSchemaType } from 'mongoose';

/** An operator's price for a model (USD per million tokens), in place of the published one. */
export const modelPriceSchema = new Schema(
  {
    _id: { type: String, required: true },
    input_usd_per_mtok: { type: Number, required: true },
    output_usd_per_mtok: { type: Number, required: true },
    cached_input_usd_per_mtok: { type: Number, required: false, default: null },
    updated_at: { type: Date, required: true },
  },
  { collection: 'model_prices', versionKey: false },
);

export type ModelPriceDoc = InferSchemaType<typeof modelPriceSchema> & { _id: string };
