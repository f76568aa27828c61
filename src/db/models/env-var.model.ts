import { Schema, type InferSchemaType } from 'mongoose';

/** A provider secret, keyed by variable name; `ciphertext` is AES-256-GCM (see env-mgmt/secret-box). */
export const envVarSchema = new Schema(
  {
    _id: { type: String, required: true },
    ciphertext: { type: String, required: true },
    updated_at: { type: Date, required: true },
    /** For a credential: the base URL settings it was entered under (env-mgmt/key-bases), as JSON text. */
    entered_for: { type: String, required: false },
  },
  { collection: 'env_vars', versionKey: false },
);

export type EnvVarDoc = InferSchemaType<typeof envVarSchema> & { _id: string };
