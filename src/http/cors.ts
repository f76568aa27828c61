import cors from '@koa/cors';
import type { Middleware } from 'koa';

/**
 * CORS for the trusted origins only (see trusted-origins.ts). Never `*` with credentials: an origin
 * is echoed only when trusted, and a preflight from any other origin gets no CORS headers.
 */
export function corsMiddleware(trusted: (origin: string) => boolean): Middleware {
  return cors({
    origin: (ctx) => {
      const origin = ctx.get('Origin');
      return origin && trusted(origin) ? origin : '';
    },
    credentials: true,
    allowHeaders: ['Content-Type', 'Authorization', 'X-API-Key', 'Idempotency-Key', 'Last-Event-ID'],
    // A browser client may read whether its submission was a replay.
    exposeHeaders: ['Idempotent-Replayed'],
    allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    maxAge: 600,
  });
}
