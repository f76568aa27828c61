import type { Middleware } from 'koa';
import { metrics } from '../metrics/metrics';
import type { RouteFacts } from './route-lookup';

/**
 * Counts and times every request by its route's template (`POST /wf/{workflow_id}/run/`), never
 * its raw path: ids would make a series per run. Requests outside the API count as `site`, API
 * paths no route answers as `api:unmatched`. Outside the error middleware, so the status is the
 * one finally answered.
 */
export function httpMetrics(
  isApi: (path: string) => boolean,
  routeOf: (method: string, path: string) => RouteFacts | null,
): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const facts = isApi(ctx.path) ? routeOf(ctx.method, ctx.path) : null;
      const route = facts
        ? `${facts.route.method.toUpperCase()} ${facts.route.path}`
        : isApi(ctx.path)
          ? 'api:unmatched'
          : 'site';
      metrics.httpRequests.inc({ route, status: String(ctx.status) });
      metrics.httpDuration.observe({ route }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}
