import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import type { BrowserSessionStore } from '../db/browser-sessions';

/**
 * Browser logins: a browser cannot add an API key header, so `/login` trades a key for a session
 * cookie. The cookie holds only a random 256-bit session id; the session itself (the key it came
 * from, its expiry) lives in MongoDB, so every api replica accepts it, and logging out on any
 * replica ends it for all (a copied cookie stops working). The stored `_id` is an HMAC of the id
 * under a key derived from the server's secret key: the database alone yields no usable cookie and
 * cannot mint one. A session is a user's (signed in with a password, a key or OpenID; disabling the
 * user ends it), or names a configured API key by a tag: removing that key from the configuration
 * ends its sessions.
 *
 * Over TLS the cookie is `__Host-spur_session` (Secure, Path=/, no Domain: a browser accepts it only
 * from this origin over HTTPS, so neither a plain-HTTP answer nor a sibling subdomain can plant or
 * overwrite it); over plain HTTP (loopback development) it is `spur_session`. Both HttpOnly,
 * SameSite=Strict.
 */
export const SESSION_COOKIE = 'spur_session';
export const TLS_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

/** Who a session is for: a login with a configured key, or a signed-in user. */
export type SessionHolder = { keyDigest: Buffer } | { userId: string; via: 'session' | 'oidc'; keyId?: string };

/** Who a valid session's cookie stands for. */
export type SessionIdentity =
  | { configKey: true }
  | {
      configKey: false;
      /** The stored session's id (a keyed digest of the cookie's, no cookie itself): what a switch of workspace names. */
      storedId: string;
      userId: string;
      keyId: string | null;
      via: 'session' | 'oidc';
      /** Switched to with `PUT /api/access/me/`; null: not switched. */
      workspaceId: string | null;
    };

export interface BrowserSessions {
  /** Starts a session for the holder and sets its cookie (ending the request's old one). */
  issue(ctx: Context, holder: SessionHolder): Promise<void>;
  /** Ends the request's session server-side (if any) and clears the cookie. */
  end(ctx: Context): Promise<void>;
  /**
   * Who the request's session cookie stands for, when it names a stored, unexpired session of a key
   * still configured or of a user (whether that user may still act is the caller's to check).
   */
  find(ctx: Context): Promise<SessionIdentity | null>;
}

export function browserSessions(
  secretKey: Buffer,
  digests: readonly Buffer[],
  ttlMs: number,
  store: BrowserSessionStore,
  clock: () => number = Date.now,
): BrowserSessions {
  const idKey = createHmac('sha256', secretKey).update('spur browser session id v2').digest();
  const tags = new Set(digests.map(tagOf));
  const storedId = (sessionId: string) => createHmac('sha256', idKey).update(sessionId).digest('hex');

  return {
    async issue(ctx, holder) {
      // A login replaces the browser's previous session rather than leaving it valid beside the new one.
      const previous = presentedSessionId(ctx);
      if (previous) await store.remove(storedId(previous));
      const sessionId = newRandomId();
      const now = clock();
      await store.create(
        storedId(sessionId),
        'keyDigest' in holder
          ? {
              keyTag: tagOf(holder.keyDigest),
              userId: null,
              keyId: null,
              via: 'session',
              expiresAt: new Date(now + ttlMs),
            }
          : {
              keyTag: null,
              userId: holder.userId,
              keyId: holder.keyId ?? null,
              via: holder.via,
              expiresAt: new Date(now + ttlMs),
            },
        new Date(now),
      );
      setCookie(ctx, sessionId, Math.floor(ttlMs / 1000));
    },
    async end(ctx) {
      const sessionId = presentedSessionId(ctx);
      if (sessionId) await store.remove(storedId(sessionId));
      setCookie(ctx, '', 0);
    },
    async find(ctx) {
      const sessionId = presentedSessionId(ctx);
      if (!sessionId) return null;
      const session = await store.find(storedId(sessionId), new Date(clock()));
      if (session === null) return null;
      if (session.userId !== null)
        return {
          configKey: false,
          storedId: storedId(sessionId),
          userId: session.userId,
          keyId: session.keyId,
          via: session.via,
          workspaceId: session.workspaceId ?? null,
        };
      return session.keyTag !== null && tags.has(session.keyTag) ? { configKey: true } : null;
    },
  };
}

/** Not secret: a short name of a configured digest, so a session names the key it came from. */
function tagOf(digest: Buffer): string {
  return createHash('sha256').update(digest).digest('hex').slice(0, 16);
}

/**
 * TLS at this server, or at a proxy in front that says so in `X-Forwarded-Proto`. The header can
 * only make things stricter: any `https` in it counts (a proxy that appends its own value after a
 * client's `http` still wins), and TLS only ever adds requirements (the `__Host-` cookie, Secure,
 * an `https` Origin).
 */
export function requestIsTls(ctx: Context): boolean {
  return (
    ctx.secure ||
    ctx
      .get('x-forwarded-proto')
      .split(',')
      .some((proto) => proto.trim().toLowerCase() === 'https')
  );
}

/** The cookie name this request's scheme uses: over TLS only the `__Host-` one is read or set. */
export function sessionCookieName(ctx: Context): string {
  return requestIsTls(ctx) ? TLS_SESSION_COOKIE : SESSION_COOKIE;
}

/** The session id in the request's cookie when it has the shape of one (anything else is no session). */
function presentedSessionId(ctx: Context): string | null {
  return presentedRandomId(ctx, sessionCookieName(ctx));
}

/** A random id (32 bytes, base64url) in the request's cookie `name`, when the value has that shape. */
export function presentedRandomId(ctx: Context, name: string): string | null {
  const value = cookieValue(ctx.get('cookie'), name);
  return value !== null && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : null;
}

/** A new random id (32 bytes, base64url) for a cookie to hold. */
export const newRandomId = () => randomBytes(32).toString('base64url');

function setCookie(ctx: Context, value: string, maxAgeSeconds: number): void {
  setSiteCookie(ctx, { name: sessionCookieName(ctx), value, maxAgeSeconds, sameSite: 'Strict' });
}

/** Sets an HttpOnly cookie for the whole site (`Path=/`), Secure over TLS. */
export function setSiteCookie(
  ctx: Context,
  cookie: { name: string; value: string; maxAgeSeconds: number; sameSite: 'Strict' | 'Lax' },
): void {
  const parts = [
    `${cookie.name}=${cookie.value}`,
    'Path=/',
    `Max-Age=${cookie.maxAgeSeconds}`,
    'HttpOnly',
    `SameSite=${cookie.sameSite}`,
  ];
  if (requestIsTls(ctx)) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

/** A cookie's value in a `Cookie` header, or null. */
export function cookieValue(header: string, name: string): string | null {
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
