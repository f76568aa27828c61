import { trusted } from 'mongoose';
import type { BrowserSessionDoc, Models } from './models';

/** A browser session as the api sees it: who signed in (a configured key or a user), how, until when. */
export interface StoredBrowserSession {
  /** A login with a configured key: that key's tag; else null. */
  keyTag: string | null;
  /** A user's session: the user; else null. */
  userId: string | null;
  /** A session signed in with a user's key: that key (its role caps the session's). */
  keyId: string | null;
  via: 'session' | 'oidc';
  expiresAt: Date;
  /** The workspace a user's session was switched to; null: not switched. */
  workspaceId?: string | null;
}

export interface BrowserSessionStore {
  /** Records a new session under `id` (a keyed digest of the cookie's random value). */
  create(id: string, session: StoredBrowserSession, now: Date): Promise<void>;
  /** The session, or null when there is none or it has expired (an expired one is removed). */
  find(id: string, now: Date): Promise<StoredBrowserSession | null>;
  /** Ends the session, whichever replica made it. */
  remove(id: string): Promise<void>;
  /** Ends every session of a user (disabled or deleted), on every replica at once. */
  removeForUser(userId: string): Promise<void>;
  /** Moves the session into another workspace (its requests act there from the next one on). */
  switchWorkspace(id: string, workspaceId: string): Promise<void>;
}

/** How often a process removes expired sessions itself (where no TTL index does: FerretDB v1). */
const SWEEP_EVERY_MS = 10 * 60_000;

/** The only writer of `browser_sessions`. */
export function createBrowserSessionStore(models: Models): BrowserSessionStore {
  const { BrowserSession } = models;
  let lastSweep = 0;

  function sweepNowAndThen(now: Date): void {
    if (now.getTime() - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now.getTime();
    BrowserSession.deleteMany({ expires_at: trusted({ $lt: now }) }).catch(() => undefined);
  }

  return {
    async create(id, session, now) {
      sweepNowAndThen(now);
      await BrowserSession.create({
        _id: id,
        key_tag: session.keyTag,
        user_id: session.userId,
        key_id: session.keyId,
        via: session.via,
        created_at: now,
        expires_at: session.expiresAt,
      });
    },
    async find(id, now) {
      const doc = await BrowserSession.findById(id).lean<BrowserSessionDoc>();
      if (!doc) return null;
      if (doc.expires_at > now)
        return {
          keyTag: doc.key_tag ?? null,
          userId: doc.user_id ?? null,
          keyId: doc.key_id ?? null,
          via: doc.via === 'oidc' ? 'oidc' : 'session',
          expiresAt: doc.expires_at,
          workspaceId: doc.workspace_id ?? null,
        };
      await BrowserSession.deleteOne({ _id: id });
      return null;
    },
    async remove(id) {
      await BrowserSession.deleteOne({ _id: id });
    },
    async removeForUser(userId) {
      await BrowserSession.deleteMany({ user_id: userId });
    },
    async switchWorkspace(id, workspaceId) {
      await BrowserSession.updateOne({ _id: id }, { $set: { workspace_id: workspaceId } });
    },
  };
}
