import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { type BrowserSessions, sameOriginOrSafe } from './browser-session';

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
function presentedKey(authorization: string | undefined, apiKey: string | string[] | undefined): string | null {
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

/** What the check leaves on `ctx.state` for a request that presented a configured key. */
export interface ApiCaller {
  apiKeyDigest?: string;
}

export interface ApiKeyOptions {
  /** Paths that never need a key (`/api/health`). */
  openPaths: ReadonlySet<string>;
  /** Paths the check applies to; others (the web UI's pages) guard themselves. */
  guarded: (path: string) => boolean;
  /** Browser logins: a valid session cookie counts as a key (state changes need a same-origin Origin). */
  sessions?: BrowserSessions;
}

/**
 * When keys are configured, every guarded request but the open paths needs one: a header key, or
 * a browser session cookie. The presented key is hashed and compared with every configured digest
 * in constant time.
 */
export function apiKeyMiddleware(digests: Buffer[], options: ApiKeyOptions): Middleware {
  return async function requireApiKey(ctx, next) {
    // The router ignores a trailing slash (`/api/health/` is PySpur's spelling), so must this check.
    if (digests.length === 0 || !options.guarded(ctx.path) || options.openPaths.has(ctx.path.replace(/(.)\/+$/, '$1')) || ctx.method === 'OPTIONS') return next();
    const key = presentedKey(ctx.get('authorization') || undefined, ctx.headers['x-api-key']);
    if (key === null && (await options.sessions?.valid(ctx))) {
      if (!sameOriginOrSafe(ctx)) {
        ctx.status = 403;
        ctx.body = { detail: 'Cross-origin request refused: a browser session is accepted only from its own origin' };
        return;
      }
      return next();
    }
    const digest = matchingDigest(digests, key);
    if (!digest) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer');
      ctx.body = { detail: key === null ? 'Not authenticated' : 'Invalid API key' };
      return;
    }
    // Who is calling, for what is scoped per caller (idempotency keys): the key's digest, never the key.
    (ctx.state as ApiCaller).apiKeyDigest = digest.toString('hex');
    return next();
  };
}
