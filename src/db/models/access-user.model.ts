import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A person who signs in to Spur (`/api/access/users/`): `UA<n>`, apart from PySpur's chat users
 * (`users`, `U<n>`), whom the workflows' chat sessions name. A user signs in with a password, an
 * OpenID provider (`oidc_subject`), or their API keys.
 */
export const accessUserSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    username: { type: String, required: true, unique: true },
    email: { type: String, default: null },
    display_name: { type: String, default: null },
    /** The user's role in `default`; null: not a member of it (src/db/workspace-members.ts has the others). */
    role: { type: String, default: null },
    disabled: { type: Boolean, required: true, default: false },
    /** `scrypt$…` (src/access/passwords.ts); null: no password sign-in. Never answered. */
    password_hash: { type: String, default: null },
    /** `<issuer> <sub>` of the OpenID account the user was provisioned from, unique when set. */
    oidc_subject: { type: String, default: null },
    created_at: { type: Date, required: true },
    last_seen_at: { type: Date, default: null },
  },
  { collection: 'access_users', versionKey: false },
);
accessUserSchema.index({ oidc_subject: 1 });

export type AccessUserDoc = InferSchemaType<typeof accessUserSchema> & { _id: string };
