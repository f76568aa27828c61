import { trusted } from 'mongoose';
import type { BrowserSessionDoc, Models } from './models';

/** A browser session as the api sees it: whose key made it and until when it holds. */
export interface StoredBrowserSession {
  keyTag: string;
  expiresAt: Date;
}

export interface BrowserSessionStore {
  /** Records a new session under `id` (a keyed digest of the cookie's random value). */
  create(id: string, session: StoredBrowserSession, now: Date): Promise<void>;
  /** The session, or null when there is none or it has expired (an expired one is removed). */
  find(id: string, now: Date): Promise<StoredBrowserSession | null>;
  /** Ends the session, whichever replica made it. */
  remove(id: string): Promise<void>;
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
      await BrowserSession.create({ _id: id, key_tag: session.keyTag, created_at: now, expires_at: session.expiresAt });
    },
    async find(id, now) {
      const doc = await BrowserSession.findById(id).lean<BrowserSessionDoc>();
      if (!doc) return null;
      if (doc.expires_at > now) return { keyTag: doc.key_tag, expiresAt: doc.expires_at };
      await BrowserSession.deleteOne({ _id: id });
      return null;
    },
    async remove(id) {
      await BrowserSession.deleteOne({ _id: id });
    },
  };
}
