import { callerOf } from '../access/caller';
import { createHash, timingSafeEqual } from 'node:crypto';

/** `sha256:<hex>` of a key: what configuration holds, so a leaked config does not leak keys. */
export function hashApiKey(key: string): string {
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}

function digestOf(hash: string): Buffer | null {
  const match = /^sha256:([0-9a-f]{64})$/.exec(hash.trim());
  return match?.[1] ? Buffer.from(match[1], 'hex') : null;
}

/** Parses configured hashes; throws on one that is not `sha256:<64 hex>`. */
export function parseKeyHashes(hashes: readonly string[]): Buffer[] {
  return hashes.map((h) => {
    const digest = digestOf(h);
    if (!digest) throw new Error(`API key hash must look like sha256:<64 hex digits>, got '${h.slice(0, 12)}…'`);
    return digest;
  });
}

/** The presented key, from `Authorization: Bearer <key>` or `X-API-Key: <key>`. */
export function presentedKey(authorization: string | undefined, apiKey: string | string[] | undefined): string | null {
  const bearer = authorization ? /^Bearer\s+(.+)$/i.exec(authorization.trim())?.[1] : undefined;
  if (bearer) return bearer;
  if (typeof apiKey === 'string' && apiKey.length > 0) return apiKey;
  return null;
}

/** The configured digest the key hashes to, or null; compares with every digest in constant time. */
export function matchingDigest(digests: readonly Buffer[], key: string | null): Buffer | null {
  const digest = key === null ? null : createHash('sha256').update(key, 'utf8').digest();
  let found: Buffer | null = null;
  // No early exit: the time taken must not tell which prefix matched.
  for (const expected of digests) if (digest !== null && timingSafeEqual(digest, expected)) found = expected;
  return found;
}

/** What the gate (gate.ts) leaves on `ctx.state`. */
export interface ApiCaller {
  /** A configured key or a valid session came with the request, or no keys are configured. */
  authenticated?: boolean;
  /** The digest of the key presented, when one was. */
  apiKeyDigest?: string;
  /** A browser session (a sign-in) came with the request. */
  session?: boolean;
}

/**
 * The caller as runs record it (src/runs/run-caller.ts): a short id of the key's digest, the user
 * of a session (`user:<id>`), `session` (a login with a configured key), or null (keyless).
 */
export function callerId(state: unknown): string | null {
  const caller = state as ApiCaller;
  if (caller.apiKeyDigest) return `key:${caller.apiKeyDigest.slice(0, 12)}`;
  if (!caller.session) return null;
  const userId = callerOf(state)?.userId;
  return userId ? `user:${userId}` : 'session';
}

/**
 * Whose idempotency keys a request's are: its API key's digest, else its signed-in user, else
 * null (a configured key's session, or a keyless instance: the operator's, shared). Two users'
 * keys never meet, so one cannot be answered with the other's replay.
 */
export function callerPrincipal(state: unknown): string | null {
  const digest = (state as ApiCaller).apiKeyDigest;
  if (digest) return digest;
  const caller = callerOf(state);
  return caller?.userId && caller.via !== 'local' ? `user:${caller.userId}` : null;
}

/** False unless the gate let the request in as authenticated (the allowlist also lets others in). */
export function isAuthenticated(state: unknown): boolean {
  return (state as ApiCaller).authenticated === true;
}
