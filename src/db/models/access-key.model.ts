import { DEFAULT_WORKSPACE } from '../workspace-scope';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A user's API key (`/api/access/keys/`): `K<n>`. Only the SHA-256 of the key is kept (the key is
 * 256 random bits, so a fast hash is enough); the key itself is shown once, when it is made.
 */
export const accessKeySchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    /** Hex SHA-256 of the key: how a request's key is found. */
    digest: { type: String, required: true, unique: true },
    user_id: { type: String, required: true },
    name: { type: String, required: true },
    /** The most the key may do; its user's role caps it further. */
    role: { type: String, required: true },
    /** The workspace the key acts in (`default` for keys from before workspaces). */
    workspace_id: { type: String, required: true, default: DEFAULT_WORKSPACE },
    expires_at: { type: Date, default: null },
    created_at: { type: Date, required: true },
    last_used_at: { type: Date, default: null },
  },
  { collection: 'access_keys', versionKey: false },
);
accessKeySchema.index({ user_id: 1 });

export type AccessKeyDoc = InferSchemaType<typeof accessKeySchema> & { _id: string };
