import { Schema, type InferSchemaType } from 'mongoose';

/**
 * One counter (`_id: "settings"`) that every change of what model calls read (provider settings,
 * limits, budgets, prices) moves: processes keep those in memory while it stands still
 * (src/db/settings-cache.ts).
 */
export const settingsGenerationSchema = new Schema(
  {
    _id: { type: String, required: true },
    n: { type: Number, required: true },
  },
  { collection: 'settings_generation', versionKey: false },
);

export type SettingsGenerationDoc = InferSchemaType<typeof settingsGenerationSchema> & { _id: string };
