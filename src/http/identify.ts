import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { type Caller, configuredKeyCaller, LOCAL_CALLER } from '../access/caller';
import { type Role, weakerRole } from '../contracts/roles';
import type { AccessKeyStore } from '../db/access-keys';
import type { AccessUserStore } from '../db/access-users';
import type { AccessKeyDoc, AccessUserDoc } from '../db/models';
import { isInstallationAdmin, type WorkspaceMembers } from '../db/workspace-members';
import { matchingDigest, presentedKey } from './api-keys';
import { type BrowserSessions, sameOriginOrSafe } from './browser-session';

export interface IdentifyDeps {
  /** Configured key digests (SPUR_API_KEY_HASHES): the operator's keys, admins. */
  digests: readonly Buffer[];
  /** No sign-in required (a keyless loopback instance): a request without credentials acts as `local`. */
  open: boolean;
  sessions: BrowserSessions;
  users: AccessUserStore;
  keys: AccessKeyStore;
  members: WorkspaceMembers;
  clock?: () => Date;
}

/** Who a request is from, or why it is from no one the gate accepts. */
export type Identity =
  | { caller: Caller; keyDigest: string | null }
  | { caller: null; refused: 'no-credentials' | 'invalid-key' | 'cross-origin-session' | 'not-a-member' };

/** Not secret: a short name of a configured key's digest (the one sessions and runs record). */
export const keyTag = (digest: Buffer | string) =>
  (typeof digest === 'string' ? digest : digest.toString('hex')).slice(0, 12);

/** The key of this digest and its user, while the key is unexpired and the user enabled; else null. */
export async function liveKey(
  keys: AccessKeyStore,
  users: AccessUserStore,
  digest: string,
  now: Date,
): Promise<{ key: AccessKeyDoc; user: AccessUserDoc } | null> {
  const key = await keys.byDigest(digest);
  if (!key || (key.expires_at && key.expires_at <= now)) return null;
  const user = await users.get(key.user_id);
  return user && !user.disabled ? { key, user } : null;
}

/** A request marks its key used and its user seen only when the mark read with it is this old. */
const MARK_EVERY_MS = 60_000;

/** Hex SHA-256 of a presented key: how a user's key is looked up. */
export const keyDigestOf = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

/**
 * Reads the request's key or session cookie and says who it is. Every request looks its key,
 * session, user and membership up in MongoDB (no cache): revoking a key, ending a session,
 * disabling a user or taking them out of a workspace holds at once on every api process. A user's
 * key acts with the weaker of its own role and its user's current role in the key's workspace.
 */
export function identifier({ digests, open, sessions, users, keys, members, clock = () => new Date() }: IdentifyDeps) {
  async function activeUser(id: string): Promise<AccessUserDoc | null> {
    const user = await users.get(id);
    return user && !user.disabled ? user : null;
  }

  /** A session's user, still enabled, and the role of the key it signed in with, while that key lives. */
  async function sessionHolder(
    userId: string,
    keyId: string | null,
    current: string | null,
    now: Date,
  ): Promise<{ user: AccessUserDoc; keyRole: Role | null; workspaceId: string } | null> {
    const user = await activeUser(userId);
    if (!user) return null;
    if (keyId === null) return { user, keyRole: null, workspaceId: current ?? (await members.homeOf(user)) };
    const key = await keys.get(keyId);
    const live = key && key.user_id === userId && !(key.expires_at && key.expires_at <= now);
    // A session signed in with a key acts where the key does: signing in moves no one into another workspace.
    return live ? { user, keyRole: key.role as Role, workspaceId: key.workspace_id } : null;
  }

  const noted = (work: Promise<unknown>) => void work.catch(() => undefined);
  /** Whether a `last_…_at` read with the request is old enough to write again (the stores write at most once a minute). */
  const stale = (at: Date | null | undefined, now: Date) => !at || now.getTime() - at.getTime() >= MARK_EVERY_MS;

  return async function identify(ctx: Context): Promise<Identity> {
    const now = clock();
    const key = presentedKey(ctx.get('authorization') || undefined, ctx.headers['x-api-key']);
    if (key !== null) {
      const configured = matchingDigest(digests, key);
      const digest = keyDigestOf(key);
      if (configured) return { caller: configuredKeyCaller(keyTag(configured), 'key'), keyDigest: digest };
      const live = await liveKey(keys, users, digest, now);
      // A keyless instance ignores a key it does not know, as it always has: clients such as the
      // OpenAI SDK send one whatever the server.
      if (!live) return open ? { caller: LOCAL_CALLER, keyDigest: null } : { caller: null, refused: 'invalid-key' };
      const { key: stored, user } = live;
      const memberRole = await members.roleOf(user, stored.workspace_id);
      if (memberRole === null) return { caller: null, refused: 'not-a-member' };
      if (stale(stored.last_used_at, now)) noted(keys.used(stored._id, now));
      if (stale(user.last_seen_at, now)) noted(users.seen(user._id, now));
      const role = weakerRole(stored.role as Role, memberRole);
      return {
        caller: {
          userId: user._id,
          username: user.username,
          keyId: stored._id,
          via: 'key',
          role,
          workspaceId: stored.workspace_id,
          installationAdmin: isInstallationAdmin(user) && role === 'admin',
          sessionId: null,
        },
        keyDigest: digest,
      };
    }
    const session = await sessions.find(ctx);
    if (session !== null) {
      const holder = session.configKey
        ? null
        : await sessionHolder(session.userId, session.keyId, session.workspaceId, now);
      if (session.configKey || holder) {
        if (!sameOriginOrSafe(ctx)) return { caller: null, refused: 'cross-origin-session' };
        if (!holder) return { caller: configuredKeyCaller('session', 'session'), keyDigest: null };
        if (stale(holder.user.last_seen_at, now)) noted(users.seen(holder.user._id, now));
        const { user, keyRole, workspaceId } = holder;
        const memberRole = await members.roleOf(user, workspaceId);
        if (memberRole === null) return { caller: null, refused: 'not-a-member' };
        const role = keyRole ? weakerRole(keyRole, memberRole) : memberRole;
        const via = session.configKey ? 'session' : session.via;
        const installationAdmin = isInstallationAdmin(user) && role === 'admin';
        // A session signed in with a key stays where its key acts: only the others switch.
        const sessionId = session.configKey || session.keyId !== null ? null : session.storedId;
        return {
          caller: {
            userId: user._id,
            username: user.username,
            keyId: null,
            via,
            role,
            workspaceId,
            installationAdmin,
            sessionId,
          },
          keyDigest: null,
        };
      }
    }
    return open ? { caller: LOCAL_CALLER, keyDigest: null } : { caller: null, refused: 'no-credentials' };
  };
}

export type Identify = ReturnType<typeof identifier>;
