import type Router from '@koa/router';
import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { matchingDigest } from '../http/api-keys';
import { type BrowserSessions, sameOriginOrSafe } from '../http/browser-session';
import type { LoginAttempts } from '../http/login-attempts';
import { loginPage } from './pages';

/** Where to go after signing in: only a path on this server (never `//host` or a full URL). */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])/.test(next) ? next : '/';
}

async function readForm(ctx: Context): Promise<URLSearchParams> {
  const text = await getRawBody(ctx.req, { limit: 16 * 1024, encoding: 'utf8', length: ctx.request.length });
  return new URLSearchParams(text);
}

export interface LoginOptions {
  digests: readonly Buffer[];
  sessions: BrowserSessions;
  attempts: LoginAttempts;
  /** The address failed logins are counted per (http/login-attempts.ts). */
  clientAddress: (ctx: Context) => string;
}

/**
 * `/login` trades an API key for a browser session cookie; `/logout` ends the session on the
 * server. Without keys (loopback only) there is nothing to log in to: `/login` sends the browser on.
 */
export function mountLogin(router: Router, { digests, sessions, attempts, clientAddress }: LoginOptions): void {
  const htmlAnswer = (ctx: Context, status: number, next: string, error: string) => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = loginPage(next, error);
  };

  router.get('/login', async (ctx) => {
    if (digests.length === 0 || (await sessions.valid(ctx))) return ctx.redirect(safeNext(ctx.query.next));
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = loginPage(safeNext(ctx.query.next));
  });

  router.post('/login', async (ctx) => {
    // Login CSRF: another site must not sign a browser in under its own key.
    if (!sameOriginOrSafe(ctx)) {
      ctx.status = 403;
      ctx.body = { detail: 'Cross-origin login refused' };
      return;
    }
    const form = await readForm(ctx);
    const next = safeNext(form.get('next'));
    if (digests.length === 0) return htmlAnswer(ctx, 401, next, 'This server has no API keys: no login needed.');
    const client = clientAddress(ctx);
    const wait = attempts.retryAfterSeconds(client);
    if (wait > 0) {
      ctx.set('Retry-After', String(wait));
      return htmlAnswer(ctx, 429, next, `Too many failed sign-ins from your address: try again in ${wait} s.`);
    }
    const digest = matchingDigest(digests, form.get('api_key')?.trim() || null);
    if (!digest) {
      attempts.failed(client);
      return htmlAnswer(ctx, 401, next, 'That API key is not valid.');
    }
    await sessions.issue(ctx, digest);
    ctx.status = 303;
    ctx.redirect(next);
  });

  router.post('/logout', async (ctx) => {
    if (!sameOriginOrSafe(ctx)) {
      ctx.status = 403;
      ctx.body = { detail: 'Cross-origin logout refused' };
      return;
    }
    await sessions.end(ctx);
    ctx.status = 303;
    ctx.redirect('/login');
  });
}
