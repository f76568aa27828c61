import type Router from '@koa/router';
import { JSON_TYPE, MULTIPART_TYPE } from './body-types';
import { type MountableRoute, type RoutePermission, koaPathOf } from './route';

const JSON_ONLY = [JSON_TYPE] as const;
const JSON_OR_MULTIPART = [JSON_TYPE, MULTIPART_TYPE] as const;

/** What the gate needs to know of the API route a request is for, before any router runs. */
export interface RouteFacts {
  /** The route as declared (OpenAPI's `{name}` path, without the prefix). */
  route: MountableRoute;
  /** The path's parameters, as the router will read them. */
  params: Record<string, string>;
}

/**
 * Which API route a request is for: the router's own match, so the gate and the router cannot
 * disagree. Null for a path no API route answers (the router then answers 404 or 405).
 */
export function apiRouteLookup(
  router: Router,
  routes: readonly MountableRoute[],
  prefix: string,
): (method: string, path: string) => RouteFacts | null {
  const byLayer = new Map<string, MountableRoute>();
  for (const r of routes) {
    const key = `${r.method.toUpperCase()} ${prefix}${koaPathOf(r.path)}`;
    // The first declaration of a path wins, as the router's first matching layer does.
    if (!byLayer.has(key)) byLayer.set(key, r);
  }
  return (method, path) => {
    const asked = method === 'HEAD' ? 'GET' : method;
    for (const layer of router.match(path, method).pathAndMethod) {
      const route = byLayer.get(`${asked} ${String(layer.path)}`);
      if (route) return { route, params: layer.params(path, layer.captures(path), {}) as Record<string, string> };
    }
    return null;
  };
}

/**
 * The body types a request to the API may have: JSON, multipart for the routes that take files
 * (uploads, datasets, RAG documents), and what a route reading its own body names (a webhook).
 */
export function bodyTypesOf(facts: RouteFacts | null): readonly string[] {
  const route = facts?.route;
  return route?.bodyTypes ?? (route?.bodyType === MULTIPART_TYPE ? JSON_OR_MULTIPART : JSON_ONLY);
}

/** The permission the request's route needs; null when it is no API route (answered 404 by the router). */
export function permissionOf(facts: RouteFacts | null): RoutePermission | null {
  return facts?.route.permission ?? null;
}
