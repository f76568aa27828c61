import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';

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

/**
 * When keys are configured, every request but the open paths needs one. The presented key is
 * hashed and compared with every configured digest in constant time (no early exit that could
 * leak which prefix matched).
 */
export function apiKeyMiddleware(digests: Buffer[], openPaths: ReadonlySet<string>): Middleware {
  return async function requireApiKey(ctx, next) {
    // The router ignores a trailing slash (`/api/health/` is PySpur's spelling), so must this check.
    if (digests.length === 0 || openPaths.has(ctx.path.replace(/(.)\/+$/, '$1')) || ctx.method === 'OPTIONS') return next();
    const key = presentedKey(ctx.get('authorization') || undefined, ctx.headers['x-api-key']);
    const digest = key === null ? null : createHash('sha256').update(key, 'utf8').digest();
    let ok = false;
    for (const expected of digests) ok = (digest !== null && timingSafeEqual(digest, expected)) || ok;
    if (!ok) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer');
      ctx.body = { detail: key === null ? 'Not authenticated' : 'Invalid API key' };
      return;
    }
    return next();
  };
}
