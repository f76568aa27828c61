import type Router from '@koa/router';
import { JSON_TYPE, MULTIPART_TYPE } from './body-types';
import { type MountableRoute, koaPathOf } from './route';

const JSON_ONLY = [JSON_TYPE] as const;
const JSON_OR_MULTIPART = [JSON_TYPE, MULTIPART_TYPE] as const;

/**
 * The body types a request to the API may have: JSON, multipart for the routes that take files
 * (uploads, datasets, RAG documents), and what a route reading its own body names (a webhook). Which route a path is, is the router's own match, so
 * this and the router cannot disagree.
 */
export function apiBodyTypes(
  router: Router,
  routes: readonly MountableRoute[],
  prefix: string,
): (method: string, path: string) => readonly string[] {
  const typesOf = new Map<string, readonly string[]>();
  for (const r of routes) {
    const types = r.bodyTypes ?? (r.bodyType === MULTIPART_TYPE ? JSON_OR_MULTIPART : null);
    if (types) typesOf.set(`${r.method.toUpperCase()} ${prefix}${koaPathOf(r.path)}`, types);
  }
  return (method, path) => {
    const layers = router.match(path, method).pathAndMethod;
    for (const layer of layers) {
      const types = typesOf.get(`${method} ${String(layer.path)}`);
      if (types) return types;
    }
    return JSON_ONLY;
  };
}
