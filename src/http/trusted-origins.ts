import type { Context, Middleware } from 'koa';
import { requestIsTls } from './browser-session';
import { isStateChanging } from './methods';

/** A PySpur frontend on another localhost port, the no-keys default. */
const LOCAL_DEV_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

/**
 * The other origins whose pages may call this server (CORS) and change state on it: the configured
 * ones (SPUR_CORS_ORIGINS), else local development origins when no keys are set, else none. `null`
 * (sandboxed frames, file: pages) is never one.
 */
export function trustedOrigins(configured: readonly string[], keysSet: boolean): (origin: string) => boolean {
  const listed = new Set(configured.filter((o) => o !== 'null'));
  if (listed.size > 0) return (origin) => listed.has(origin);
  if (keysSet) return () => false;
  return (origin) => LOCAL_DEV_ORIGIN.test(origin);
}

/** This server's origin as the browser sees it: the scheme of the request (or its TLS proxy) and its Host. */
export function ownOrigin(ctx: Context): string {
  return `${requestIsTls(ctx) ? 'https' : 'http'}://${ctx.host}`;
}

/**
 * Refuses (403) a state-changing request a browser sent from a page of another origin, with or
 * without keys. Browsers send `Origin` with every cross-origin request and every POST, so a form
 * or `fetch` of another site is refused here whatever its content type; clients that are not
 * browsers send no Origin and pass.
 */
export function originCheck(trusted: (origin: string) => boolean): Middleware {
  return async function refuseForeignOrigin(ctx, next) {
    const origin = ctx.get('origin');
    if (origin && isStateChanging(ctx.method) && origin !== ownOrigin(ctx) && !trusted(origin)) {
      ctx.status = 403;
      ctx.body = {
        detail: `Cross-origin request refused: Origin ${origin.slice(0, 200)} is neither this server's origin nor one of SPUR_CORS_ORIGINS`,
      };
      return;
    }
    return next();
  };
}
