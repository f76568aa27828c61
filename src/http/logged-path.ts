/**
 * A request path as logs may keep it: a webhook's token, a callback's token and an approval link's
 * token are their credentials, so none reaches a log (`/api/hooks/<token>` becomes
 * `/api/hooks/…`, `/api/callbacks/<token>` `/api/callbacks/…`, `/approve/<token>` `/approve/…`).
 */
export function loggedPath(path: string): string {
  return path.replace(/\/(hooks|callbacks|approve)\/[^/]+/g, '/$1/…');
}
