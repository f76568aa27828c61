import type { Middleware } from 'koa';
import { callerOf, setCaller } from '../access/caller';
import { PERMISSIONS, callerAllows, installationWide } from '../access/permissions';
import type { ApiCaller } from './api-keys';
import { hostNameOf } from './allowed-hosts';
import { bodyTypeCheck } from './body-types';
import type { Identify } from './identify';
import { permissionOf, type RouteFacts } from './route-lookup';
import { corsMiddleware } from './cors';
import { nonCanonicalPath } from './request-path';
import { originCheck } from './trusted-origins';

/** What a request without a key or session may do: go on, be sent to the login page, or nothing. */
export type AnonymousAccess = 'allow' | 'login' | 'deny';

export interface GateOptions {
  /** Who a request is from (identify.ts). */
  identify: Identify;
  /** The API route a request is for, as the router will match it; null for any other path. */
  route: (method: string, path: string) => RouteFacts | null;
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
 * a role that holds the route's permission (403), a body type the route reads (415). Default
 * closed: a path the allowlist does not name needs a key, whatever router would answer it.
 */
export function requestGate(options: GateOptions): Middleware[] {
  return [
    canonicalPath,
    hostCheck(options.hosts),
    corsMiddleware(options.trustedOrigin),
    originCheck(options.trustedOrigin),
    authenticate(options),
    authorize(options),
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

function authenticate({ identify, anonymous }: GateOptions): Middleware {
  return async function requireCaller(ctx, next) {
    const state = ctx.state as ApiCaller;
    state.authenticated = false;
    const who = await identify(ctx);
    if (who.caller) {
      state.authenticated = true;
      setCaller(ctx.state, who.caller);
      // Who is calling, for what is scoped per caller (idempotency keys): the key's digest, never the key.
      if (who.keyDigest) state.apiKeyDigest = who.keyDigest;
      state.session = who.caller.via === 'session' || who.caller.via === 'oidc';
      return next();
    }
    const access = anonymous(ctx.method, ctx.path);
    if (access === 'allow') return next();
    if (access === 'login') return ctx.redirect(`/login?next=${encodeURIComponent(ctx.originalUrl)}`);
    if (who.refused === 'not-a-member') {
      ctx.status = 403;
      ctx.body = { detail: 'Forbidden: you are no member of the workspace this key or session acts in' };
      return;
    }
    if (who.refused === 'cross-origin-session') {
      ctx.status = 403;
      ctx.body = { detail: 'Cross-origin request refused: a browser session is accepted only from its own origin' };
      return;
    }
    ctx.status = 401;
    ctx.set('WWW-Authenticate', 'Bearer');
    ctx.body = { detail: who.refused === 'invalid-key' ? 'Invalid API key' : 'Not authenticated' };
  };
}

/**
 * The role check, before any router reads an id or a body: a caller whose role lacks the route's
 * permission learns only which permission it lacks, and nothing changes.
 */
function authorize({ route }: GateOptions): Middleware {
  return async function requirePermission(ctx, next) {
    const permission = permissionOf(route(ctx.method, ctx.path));
    if (permission === null || permission === 'anyone') return next();
    const caller = callerOf(ctx.state);
    if (caller === null) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer');
      ctx.body = { detail: 'Not authenticated' };
      return;
    }
    if (callerAllows(caller, permission)) return next();
    ctx.status = 403;
    ctx.body = {
      detail: installationWide(permission)
        ? `Forbidden: this needs the permission '${permission}', which only an admin of the installation (an admin of the default workspace) holds`
        : `Forbidden: this needs the permission '${permission}' (role ${PERMISSIONS[permission].role} or above); your role is ${caller.role} in this workspace`,
    };
  };
}
