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
    /** Names the API key the login used (not secret): a key no longer configured ends its sessions. */
    key_tag: { type: String, required: true },
    created_at: { type: Date, required: true },
    /** MongoDB's TTL monitor removes the session after this; the api refuses it from then on anyway. */
    expires_at: { type: Date, required: true },
  },
  { collection: 'browser_sessions', versionKey: false },
);

export type BrowserSessionDoc = InferSchemaType<typeof browserSessionSchema> & { _id: string };
