import { Schema, type InferSchemaType } from 'mongoose';

/**
 * A browser login (`/login`). `_id` is a keyed digest of the cookie's random session id, so the
 * collection alone (a backup, a read-only database user) yields no cookie that works. Every api
 * replica reads the same documents: a session made on one is accepted by all, and ending it on one
 * ends it everywhere.
 */
export const browserSessionSchema = new Schema(
  {
    _id: { type: String, required: true },
    /**
     * A login with a configured key (SPUR_API_KEY_HASHES): names that key (not secret), so a key no
     * longer configured ends its sessions. Null for a user's session.
     */
    key_tag: { type: String, default: null },
    /** The user signed in (`UA…`): disabling or deleting them removes their sessions. */
    user_id: { type: String, default: null },
    /** A user's key given on the login page: the session acts with that key's role and ends with it. */
    key_id: { type: String, default: null },
    /** How the user signed in: `session` (password or a key on the login page) or `oidc`. */
    via: { type: String, default: 'session' },
    /** The workspace a user's session acts in (`PUT /api/access/me/`); null: `default`, or its key's. */
    workspace_id: { type: String, default: null },
    created_at: { type: Date, required: true },
    /** MongoDB's TTL monitor removes the session after this; the api refuses it from then on anyway. */
    expires_at: { type: Date, required: true },
  },
  { collection: 'browser_sessions', versionKey: false },
);
browserSessionSchema.index({ user_id: 1 });

export type BrowserSessionDoc = InferSchemaType<typeof browserSessionSchema> & { _id: string };
