import type { Middleware } from 'koa';
import { type ApiCaller, matchingDigest, presentedKey } from './api-keys';
import { hostNameOf } from './allowed-hosts';
import { bodyTypeCheck } from './body-types';
import { type BrowserSessions, sameOriginOrSafe } from './browser-session';
import { corsMiddleware } from './cors';
import { nonCanonicalPath } from './request-path';
import { originCheck } from './trusted-origins';

/** What a request without a key or session may do: go on, be sent to the login page, or nothing. */
export type AnonymousAccess = 'allow' | 'login' | 'deny';

export interface GateOptions {
  /** Configured API key digests; none = no authentication (a loopback dev instance). */
  digests: readonly Buffer[];
  sessions: BrowserSessions;
  /** `Host` names served; null = any (see allowed-hosts.ts). */
  hosts: ReadonlySet<string> | null;
  /** Other origins trusted for CORS and state changes (see trusted-origins.ts). */
  trustedOrigin: (origin: string) => boolean;
  /** The allowlist: what a request with neither key nor session may do (exact, case-sensitive paths). */
  anonymous: (method: string, path: string) => AnonymousAccess;
  /** Media types a state-changing request's body may have on this path. */
  bodyTypes: (method: string, path: string) => readonly string[];
}

/**
 * The one gate every request passes before any router or the web UI sees it, in this order: a
 * canonical path (404), a served Host (421), CORS, a trusted Origin for state changes (403), a key
 * or session unless the allowlist lets the request in (401, or the login page for the UI's pages),
 * a body type the route reads (415). Default closed: a path the allowlist does not name needs a
 * key, whatever router would answer it.
 */
export function requestGate(options: GateOptions): Middleware[] {
  return [
    canonicalPath,
    hostCheck(options.hosts),
    corsMiddleware(options.trustedOrigin),
    originCheck(options.trustedOrigin),
    authenticate(options),
    bodyTypeCheck(options.bodyTypes),
  ];
}

const canonicalPath: Middleware = async function refuseNonCanonicalPath(ctx, next) {
  const problem = nonCanonicalPath(ctx.path);
  if (problem === null) return next();
  ctx.status = 404;
  ctx.body = { detail: `Not Found: the request path is not in canonical form (${problem})` };
};

function hostCheck(hosts: ReadonlySet<string> | null): Middleware {
  return async function refuseOtherHosts(ctx, next) {
    const name = hostNameOf(ctx.get('host'));
    if (hosts === null || (name !== null && hosts.has(name))) return next();
    ctx.status = 421;
    ctx.body = {
      detail: `Misdirected Request: this server answers for ${[...hosts].join(', ')}, not for Host '${ctx.get('host').slice(0, 100)}' (SPUR_ALLOWED_HOSTS adds names)`,
    };
  };
}

function authenticate({ digests, sessions, anonymous }: GateOptions): Middleware {
  return async function requireKeyOrSession(ctx, next) {
    const caller = ctx.state as ApiCaller;
    caller.authenticated = false;
    if (digests.length === 0) {
      caller.authenticated = true;
      return next();
    }
    const key = presentedKey(ctx.get('authorization') || undefined, ctx.headers['x-api-key']);
    let crossOriginSession = false;
    if (key !== null) {
      const digest = matchingDigest(digests, key);
      if (digest) {
        caller.authenticated = true;
        // Who is calling, for what is scoped per caller (idempotency keys): the key's digest, never the key.
        caller.apiKeyDigest = digest.toString('hex');
        return next();
      }
    } else if (await sessions.valid(ctx)) {
      if (sameOriginOrSafe(ctx)) {
        caller.authenticated = true;
        caller.session = true;
        return next();
      }
      crossOriginSession = true;
    }
    const access = anonymous(ctx.method, ctx.path);
    if (access === 'allow') return next();
    if (access === 'login') return ctx.redirect(`/login?next=${encodeURIComponent(ctx.originalUrl)}`);
    if (crossOriginSession) {
      ctx.status = 403;
      ctx.body = { detail: 'Cross-origin request refused: a browser session is accepted only from its own origin' };
      return;
    }
    ctx.status = 401;
    ctx.set('WWW-Authenticate', 'Bearer');
    ctx.body = { detail: key === null ? 'Not authenticated' : 'Invalid API key' };
  };
}
