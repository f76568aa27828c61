import type { Context, Middleware } from 'koa';
import { requestIsTls } from './browser-session';

/**
 * Headers of every answer, set before anything runs so error answers carry them too: no MIME
 * sniffing, no framing by other pages (clickjacking; `frame-ancestors` is the only CSP directive
 * set, the one PySpur's pages, Swagger UI and the login form all tolerate), the Referer kept to this
 * origin (`no-referrer` would make browsers send `Origin: null` with the login form's POST), and
 * HSTS when the request came over TLS (browsers ignore it over plain HTTP anyway).
 */
export function securityHeaders(): Middleware {
  return async function setSecurityHeaders(ctx, next) {
    ctx.set({
      'X-Content-Type-Options': 'nosniff',
      'X-Frame-Options': 'DENY',
      'Content-Security-Policy': "frame-ancestors 'none'",
      'Referrer-Policy': 'same-origin',
    });
    if (requestIsTls(ctx)) ctx.set('Strict-Transport-Security', 'max-age=31536000');
    await next();
  };
}

/**
 * For an answer this server's own pages show in a frame (the editor previews stored files in an
 * `<iframe>`): framing by the same origin only, plus `policy` (e.g. `sandbox`).
 */
export function frameableBySameOrigin(ctx: Context, policy?: string): void {
  ctx.set('X-Frame-Options', 'SAMEORIGIN');
  ctx.set('Content-Security-Policy', `${policy ? `${policy}; ` : ''}frame-ancestors 'self'`);
}
