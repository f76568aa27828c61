import type Router from '@koa/router';
import { JSON_TYPE, MULTIPART_TYPE } from './body-types';
import { type MountableRoute, koaPathOf } from './route';

const JSON_ONLY = [JSON_TYPE] as const;
const JSON_OR_MULTIPART = [JSON_TYPE, MULTIPART_TYPE] as const;

/**
 * The body types a request to the API may have: JSON, and multipart for the routes that take
 * files (uploads, datasets, RAG documents). Which route a path is, is the router's own match, so
 * this and the router cannot disagree.
 */
export function apiBodyTypes(
  router: Router,
  routes: readonly MountableRoute[],
  prefix: string,
): (method: string, path: string) => readonly string[] {
  const takesFiles = new Set(
    routes
      .filter((r) => r.bodyType === MULTIPART_TYPE)
      .map((r) => `${r.method.toUpperCase()} ${prefix}${koaPathOf(r.path)}`),
  );
  return (method, path) => {
    const layers = router.match(path, method).pathAndMethod;
    return layers.some((layer) => takesFiles.has(`${method} ${String(layer.path)}`)) ? JSON_OR_MULTIPART : JSON_ONLY;
  };
}
