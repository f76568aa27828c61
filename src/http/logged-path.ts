/**
 * A request path as logs may keep it: a webhook's token is its credential, so it never reaches a
 * log (`/api/hooks/<token>` becomes `/api/hooks/…`).
 */
export function loggedPath(path: string): string {
  return path.replace(/\/hooks\/[^/]+/, '/hooks/…');
}
