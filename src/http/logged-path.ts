/**
 * A request path as logs may keep it: a webhook's token and an approval link's token are their
 * credentials, so neither reaches a log (`/api/hooks/<token>` becomes `/api/hooks/…`,
 * `/approve/<token>` becomes `/approve/…`).
 */
export function loggedPath(path: string): string {
  return path.replace(/\/(hooks|approve)\/[^/]+/g, '/$1/…');
}
