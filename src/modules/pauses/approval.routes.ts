import type Router from '@koa/router';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { noteAudit } from '../../access/audit-note';
import { cookieValue, requestIsTls, sameOriginOrSafe } from '../../http/browser-session';
import { noticePage } from './approval-page';
import { type ApprovalLinks, DecisionForm, type PageAnswer } from './approval-links.service';

/** The path prefix of approval links; the gate lets `GET`/`HEAD`/`POST /approve/{token}` in without a key. */
export const APPROVE_PREFIX = '/approve/';

/** The double-submit nonce: a random value in a cookie and in the page's form; a POST must carry both, equal. */
const NONCE_COOKIE = 'spur_approval_nonce';
const NONCE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The form's largest body: comments (10 000 characters) and override data (64 KiB), urlencoded. */
const MAX_FORM_BYTES = 256 * 1024;

/**
 * No script, no frame, no form posting elsewhere, nothing loaded from anywhere: the page is text
 * and a form, so even markup that escaped escaping could not run.
 */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function answer(ctx: Context, { status, html }: PageAnswer): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set({
    'Content-Security-Policy': PAGE_CSP,
    'Cache-Control': 'no-store',
    'X-Robots-Tag': 'noindex',
  });
  ctx.body = html;
}

function setNonce(ctx: Context, nonce: string): void {
  const parts = [`${NONCE_COOKIE}=${nonce}`, 'Path=/approve/', 'HttpOnly', 'SameSite=Strict', 'Max-Age=86400'];
  if (requestIsTls(ctx)) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

function sameNonce(cookie: string | null, form: string): boolean {
  if (cookie === null || !NONCE_PATTERN.test(cookie)) return false;
  const a = Buffer.from(cookie);
  const b = Buffer.from(form);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * `/approve/{token}`: the page of an approval link (GET) and its decision (POST). The token is the
 * credential; the POST must come from this server's page (the gate's Origin check, then a nonce
 * the page set as a cookie and put in its form).
 */
export function mountApprovalRoutes(router: Router, links: ApprovalLinks): void {
  router.get(`${APPROVE_PREFIX}:token`, async (ctx) => {
    // The page's own nonce: reused while the browser keeps it, so two tabs of one link both work.
    const kept = cookieValue(ctx.get('cookie'), NONCE_COOKIE);
    const nonce = kept !== null && NONCE_PATTERN.test(kept) ? kept : randomBytes(32).toString('base64url');
    const page = await links.page(ctx.params.token as string, nonce, ctx.path);
    if (page.status === 200) setNonce(ctx, nonce);
    answer(ctx, page);
  });

  router.post(`${APPROVE_PREFIX}:token`, async (ctx) => {
    if (!sameOriginOrSafe(ctx))
      return answer(ctx, { status: 403, html: noticePage('Refused', 'A decision is taken only from its own page.') });
    const text = await getRawBody(ctx.req, { limit: MAX_FORM_BYTES, encoding: 'utf8', length: ctx.request.length });
    const form = DecisionForm.safeParse(Object.fromEntries(new URLSearchParams(text)));
    if (!form.success)
      return answer(ctx, {
        status: 422,
        html: noticePage('Nothing was decided', `The form was incomplete: ${form.error.issues[0]?.path.join('.')}.`),
      });
    if (!sameNonce(cookieValue(ctx.get('cookie'), NONCE_COOKIE), form.data.nonce))
      return answer(ctx, {
        status: 403,
        html: noticePage('Nothing was decided', 'The form did not come from this link’s page: open the link again.'),
      });
    const decided = await links.decide(ctx.params.token as string, form.data, form.data.nonce, ctx.path);
    if (decided.audit) noteAudit(ctx.state, decided.audit);
    answer(ctx, decided);
  });
}
