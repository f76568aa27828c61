import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';

/**
 * Browser logins: a browser cannot add an API key header, so `/login` trades a key for this
 * cookie. Its value is `<expiry ms>.<key tag>.<HMAC-SHA256>`, signed with a key derived from the
 * server's secret key (so every api replica accepts it and a restart keeps it), tagged with the
 * digest of the API key it was made from (removing that key from the configuration ends its
 * sessions), HttpOnly, SameSite=Strict, Secure when the request came over TLS.
 */
export const SESSION_COOKIE = 'spur_session';

export interface BrowserSessions {
  /** A Set-Cookie value for a login with the key of this digest. */
  issue(ctx: Context, keyDigest: Buffer): void;
  /** Clears the cookie. */
  clear(ctx: Context): void;
  /** True when the request carries a cookie signed here, unexpired, of a key still configured. */
  valid(ctx: Context): boolean;
}

export function browserSessions(secretKey: Buffer, digests: readonly Buffer[], ttlMs: number, clock: () => number = Date.now): BrowserSessions {
  const signingKey = createHmac('sha256', secretKey).update('spur browser session v1').digest();
  const tags = new Set(digests.map(tagOf));
  const sign = (payload: string) => createHmac('sha256', signingKey).update(payload).digest();

  return {
    issue(ctx, keyDigest) {
      const expires = clock() + ttlMs;
      const payload = `${expires}.${tagOf(keyDigest)}`;
      const value = `${payload}.${sign(payload).toString('base64url')}`;
      setCookie(ctx, value, Math.floor(ttlMs / 1000));
    },
    clear(ctx) {
      setCookie(ctx, '', 0);
    },
    valid(ctx) {
      const value = cookieValue(ctx.get('cookie'), SESSION_COOKIE);
      const match = value ? /^(\d{1,16})\.([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/.exec(value) : null;
      if (!match) return false;
      const [, expires, tag, signature] = match as unknown as [string, string, string, string];
      const expected = sign(`${expires}.${tag}`);
      const given = Buffer.from(signature, 'base64url');
      return given.length === expected.length && timingSafeEqual(given, expected) && Number(expires) > clock() && tags.has(tag);
    },
  };
}

/** Not secret: a short name of a configured digest, so a session names the key it came from. */
function tagOf(digest: Buffer): string {
  return createHash('sha256').update(digest).digest('hex').slice(0, 16);
}

/** TLS at this server, or at a proxy in front that says so (only ever makes the cookie stricter). */
export function requestIsTls(ctx: Context): boolean {
  return ctx.secure || ctx.get('x-forwarded-proto').split(',')[0]?.trim() === 'https';
}

function setCookie(ctx: Context, value: string, maxAgeSeconds: number): void {
  const parts = [`${SESSION_COOKIE}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict'];
  if (requestIsTls(ctx)) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

function cookieValue(header: string, name: string): string | null {
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/**
 * CSRF guard for cookie-authenticated requests: a request that names another Origin is refused
 * whatever its method (SameSite=Strict lets the cookie ride along from same-site neighbours such
 * as another app on localhost, and CORS allows local origins to read answers), and one that
 * changes state must name this server's own origin. Same-origin GETs carry no Origin: allowed.
 */
export function sameOriginOrSafe(ctx: Context): boolean {
  const origin = ctx.get('origin');
  const scheme = requestIsTls(ctx) ? 'https' : 'http';
  if (origin) return origin === `${scheme}://${ctx.host}`;
  return ctx.method === 'GET' || ctx.method === 'HEAD' || ctx.method === 'OPTIONS';
}
