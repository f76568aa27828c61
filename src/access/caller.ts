import type { Role } from '../contracts/roles';
import { DEFAULT_WORKSPACE } from '../db/workspace-scope';

/** How a caller proved who they are: `local` is the keyless loopback instance of development. */
export type Via = 'key' | 'session' | 'oidc' | 'local';

/** Who is asking, as the gate established it (src/http/identify.ts): what it checks and the audit records. */
export interface Caller {
  /** `UA…` for a user; `local` on a keyless loopback instance; null for a configured key (SPUR_API_KEY_HASHES). */
  userId: string | null;
  username: string;
  /** `K…` for a user's key, `config:<tag>` for a configured one; null for a session. */
  keyId: string | null;
  via: Via;
  /** What the caller may do in its workspace: a key's role capped by its user's role there. */
  role: Role;
  /** The workspace the request acts in (src/db/workspace-scope.ts): its key's, or its session's current one. */
  workspaceId: string;
  /**
   * Whether the caller administers the installation (users, workspaces, fleet limits, the audit
   * trail): the operator, or an admin of `default` acting with an admin key or session.
   */
  installationAdmin: boolean;
  /** A user's browser session (not signed in with a key): its stored id, which a switch of workspace names; else null. */
  sessionId: string | null;
}

/** The operator: a configured key, or its browser session. Trusted as operators are. */
export const configuredKeyCaller = (tag: string, via: 'key' | 'session'): Caller => ({
  userId: null,
  username: `configured key ${tag}`,
  keyId: via === 'key' ? `config:${tag}` : null,
  via,
  role: 'admin',
  workspaceId: DEFAULT_WORKSPACE,
  installationAdmin: true,
  sessionId: null,
});

/** A keyless loopback instance (development) acts as this admin. */
export const LOCAL_CALLER: Caller = {
  userId: 'local',
  username: 'local',
  keyId: null,
  via: 'local',
  role: 'admin',
  workspaceId: DEFAULT_WORKSPACE,
  installationAdmin: true,
  sessionId: null,
};

/** The caller the gate left on `ctx.state`, or null when the allowlist let the request in without one. */
export function callerOf(state: unknown): Caller | null {
  return (state as { caller?: Caller }).caller ?? null;
}

/** The caller of a route the gate lets only identified callers reach (any but `anyone`). */
export function requiredCaller(state: unknown): Caller {
  const found = callerOf(state);
  if (!found) throw new Error('route reached without a caller: the gate must identify every caller here');
  return found;
}

export function setCaller(state: unknown, caller: Caller): void {
  (state as { caller?: Caller }).caller = caller;
}

/**
 * Whether the caller speaks for the operator rather than for a user: a configured key, its
 * session, or the keyless local instance. Such callers may name a decider (`user_id`) as PySpur
 * clients do; a user always decides as themself.
 */
export const actsForOperator = (caller: Caller): boolean => caller.userId === null || caller.via === 'local';

/**
 * The caller as a run's starter reads in the Temporal Web UI (`SpurStartedBy`): a user's username,
 * `key:<tag>` for a configured key (the first 12 hex of its digest), `session` for a configured
 * key's browser login, `local` on the keyless local instance.
 */
export function starterName(caller: Caller): string {
  if (caller.via === 'local') return 'local';
  if (caller.userId !== null) return caller.username;
  return caller.keyId?.startsWith('config:') ? `key:${caller.keyId.slice('config:'.length)}` : 'session';
}
