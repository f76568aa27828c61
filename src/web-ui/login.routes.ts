import type Router from '@koa/router';
import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { matchingDigest } from '../http/api-keys';
import { type BrowserSessions, sameOriginOrSafe } from '../http/browser-session';
import { loginPage } from './pages';

/** Where to go after signing in: only a path on this server (never `//host` or a full URL). */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])/.test(next) ? next : '/';
}

async function readForm(ctx: Context): Promise<URLSearchParams> {
  const text = await getRawBody(ctx.req, { limit: 16 * 1024, encoding: 'utf8', length: ctx.request.length });
  return new URLSearchParams(text);
}

/**
 * `/login` trades an API key for a browser session cookie; `/logout` ends it. Without keys
 * (loopback only) there is nothing to log in to: `/login` sends the browser on.
 */
export function mountLogin(router: Router, digests: readonly Buffer[], sessions: BrowserSessions): void {
  router.get('/login', (ctx) => {
    if (digests.length === 0 || sessions.valid(ctx)) return ctx.redirect(safeNext(ctx.query.next));
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
    const digest = digests.length === 0 ? null : matchingDigest(digests, form.get('api_key')?.trim() || null);
    if (!digest) {
      ctx.status = 401;
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = loginPage(next, digests.length === 0 ? 'This server has no API keys: no login needed.' : 'That API key is not valid.');
      return;
    }
    sessions.issue(ctx, digest);
    ctx.status = 303;
    ctx.redirect(next);
  });

  router.post('/logout', (ctx) => {
    if (!sameOriginOrSafe(ctx)) {
      ctx.status = 403;
      ctx.body = { detail: 'Cross-origin logout refused' };
      return;
    }
    sessions.clear(ctx);
    ctx.status = 303;
    ctx.redirect('/login');
  });
}
