import cors from '@koa/cors';
import type { Middleware } from 'koa';

const LOCAL_DEV_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

/**
 * CORS: the configured origins, or by default local development origins (a PySpur frontend on
 * another localhost port). Never `*` with credentials: an origin is echoed only when allowed.
 */
export function corsMiddleware(allowedOrigins: readonly string[]): Middleware {
  const allowed = new Set(allowedOrigins);
  return cors({
    origin: (ctx) => {
      const origin = ctx.get('Origin');
      if (!origin) return '';
      const ok = allowed.size > 0 ? allowed.has(origin) : LOCAL_DEV_ORIGIN.test(origin);
      return ok ? origin : '';
    },
    credentials: true,
    allowHeaders: ['Content-Type', 'Authorization', 'X-API-Key', 'Idempotency-Key', 'Last-Event-ID'],
    // A browser client may read whether its submission was a replay.
    exposeHeaders: ['Idempotent-Replayed'],
    allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    maxAge: 600,
  });
}
