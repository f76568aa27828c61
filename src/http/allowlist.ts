import type { AnonymousAccess } from './gate';

/** What the web UI answers a GET with (web-ui/static-site.ts `webUiPathKind`), null when nothing. */
export type UiKind = 'asset' | 'page' | 'notice' | null;

export interface AllowlistSettings {
  apiPrefix: string;
  /** Called only for paths outside the API and the login routes. */
  webUi: (path: string) => UiKind;
  /** Sign-in routes a browser reaches by `GET` (the OpenID start and callback), when configured. */
  signInPaths?: readonly string[];
}

/**
 * The only requests served without a key or session when keys are configured. Paths are compared
 * exactly and case-sensitively on the raw path, as the routers match them (`/api/health/` is the
 * compose probe's spelling of `/api/health`): the health status (its details need a key), the login
 * form and logout, the OpenID sign-in's start and callback (`GET` only: the browser is sent there), the web UI's files (its pages send the browser to the login form instead), and
 * `POST /api/hooks/{token}`, a webhook whose unguessable token is its credential (any one segment:
 * a malformed token is answered as an unknown one, 404, by the route), `POST /api/callbacks/{token}`,
 * a WaitForCallbackNode's URL, whose signed token is its credential (likewise), and `GET`/`HEAD`/`POST
 * /approve/{token}`, an approval link's page and its decision, whose signed token is its credential
 * (any one segment: a bad token is answered 403 by the route, deciding nothing).
 */
export function anonymousAllowlist({
  apiPrefix,
  webUi,
  signInPaths = [],
}: AllowlistSettings): (method: string, path: string) => AnonymousAccess {
  const health = new Set([`${apiPrefix}/health`, `${apiPrefix}/health/`]);
  const isApi = (path: string) => path === apiPrefix || path.startsWith(`${apiPrefix}/`);
  const oneSegmentUnder = (prefix: string) => (path: string) =>
    path.startsWith(prefix) && path.length > prefix.length && !path.includes('/', prefix.length);
  const isHook = oneSegmentUnder(`${apiPrefix}/hooks/`);
  const isCallback = oneSegmentUnder(`${apiPrefix}/callbacks/`);
  const signIn = new Set(signInPaths);
  const approve = '/approve/';
  const isApproval = (path: string) =>
    path.startsWith(approve) && path.length > approve.length && !path.includes('/', approve.length);
  return (method, path) => {
    if (method === 'POST' && (isHook(path) || isCallback(path))) return 'allow';
    if (isApproval(path)) return method === 'GET' || method === 'HEAD' || method === 'POST' ? 'allow' : 'deny';
    const read = method === 'GET' || method === 'HEAD';
    if (path === '/login') return read || method === 'POST' ? 'allow' : 'deny';
    if (path === '/logout') return method === 'POST' ? 'allow' : 'deny';
    if (signIn.has(path)) return method === 'GET' ? 'allow' : 'deny';
    if (isApi(path)) return read && health.has(path) ? 'allow' : 'deny';
    if (!read) return 'deny';
    const kind = webUi(path);
    if (kind === 'asset' || kind === 'notice') return 'allow';
    return kind === 'page' ? 'login' : 'deny';
  };
}
