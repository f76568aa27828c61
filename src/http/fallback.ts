import type Router from '@koa/router';
import type { Middleware } from 'koa';

/**
 * What FastAPI does when no route answered: 307 to the same path with/without the trailing slash
 * when that one exists, 405 when the path exists for another method, else a JSON 404.
 */
export function fallbackMiddleware(router: Router): Middleware {
  return async function fallback(ctx, next) {
    await next();
    if (ctx.body !== undefined || ctx.status !== 404) return;
    const alternate = ctx.path.endsWith('/') ? ctx.path.slice(0, -1) : `${ctx.path}/`;
    if (alternate && router.match(alternate, ctx.method).route) {
      ctx.status = 307;
      ctx.redirect(`${alternate}${ctx.querystring ? `?${ctx.querystring}` : ''}`);
      ctx.status = 307;
      return;
    }
    if (router.match(ctx.path, ctx.method).path.length > 0) {
      ctx.status = 405;
      ctx.body = { detail: 'Method Not Allowed' };
      return;
    }
    ctx.status = 404;
    ctx.body = { detail: 'Not Found' };
  };
}
