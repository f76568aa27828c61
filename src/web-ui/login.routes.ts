import type Router from '@koa/router';
import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { type AuditNote, noteAudit } from '../access/audit-note';
import { verifyPassword } from '../access/passwords';
import type { AccessKeyStore } from '../db/access-keys';
import type { AccessUserStore } from '../db/access-users';
import { matchingDigest } from '../http/api-keys';
import { type BrowserSessions, type SessionHolder, sameOriginOrSafe } from '../http/browser-session';
import { type Identify, keyDigestOf, keyTag, liveKey } from '../http/identify';
import type { LoginAttempts } from '../http/login-attempts';
import { loginPage, type SignInLink } from './pages';

/**
 * Where to go after signing in: only a path on this server (never `//host` or a full URL), in
 * printable ASCII: a browser drops a tab or newline from a URL, so `/<tab>/host` is `//host` to it
 * once written into the signed-in page's refresh.
 */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : '/';
}

async function readForm(ctx: Context): Promise<URLSearchParams> {
  const text = await getRawBody(ctx.req, { limit: 16 * 1024, encoding: 'utf8', length: ctx.request.length });
  return new URLSearchParams(text);
}

export interface LoginOptions {
  digests: readonly Buffer[];
  /** No sign-in required (a keyless loopback instance): nothing to log in to. */
  open: boolean;
  sessions: BrowserSessions;
  identify: Identify;
  users: AccessUserStore;
  keys: AccessKeyStore;
  /** "Sign in with …" buttons (an OpenID provider), shown above the forms. */
  links?: readonly SignInLink[];
  attempts: LoginAttempts;
  /** The address failed logins are counted per (http/login-attempts.ts). */
  clientAddress: (ctx: Context) => string;
}

/** A sign-in as the audit trail records it: who signed in, never what they signed in with. */
function signInNote(holder: SessionHolder): AuditNote {
  if ('keyDigest' in holder) {
    const keyId = `config:${keyTag(holder.keyDigest)}`;
    return { action: 'session.sign_in', target: { type: 'key', id: keyId }, actor: { key_id: keyId, via: 'session' } };
  }
  return {
    action: 'session.sign_in',
    target: { type: 'user', id: holder.userId },
    actor: { user_id: holder.userId, key_id: holder.keyId ?? null, via: holder.via },
  };
}

/**
 * `/login` trades a username and password, or an API key, for a browser session cookie; `/logout`
 * ends the session on the server. Without keys (loopback only) there is nothing to log in to:
 * `/login` sends the browser on.
 */
export function mountLogin(router: Router, options: LoginOptions): void {
  const { digests, open, sessions, attempts, clientAddress, identify, users, links = [] } = options;
  const htmlAnswer = (ctx: Context, status: number, next: string, error: string) => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = loginPage(next, error, links);
  };

  /** Who the form names, when its password or key is right; null otherwise (the same answer for an unknown user). */
  async function holderOf(form: URLSearchParams): Promise<SessionHolder | null> {
    const username = form.get('username');
    if (username !== null) {
      const user = await users.byUsername(username.trim());
      const ok = await verifyPassword(form.get('password') ?? '', user?.password_hash ?? null);
      return ok && user && !user.disabled ? { userId: user._id, via: 'session' } : null;
    }
    const key = form.get('api_key')?.trim() || null;
    const digest = matchingDigest(digests, key);
    if (digest) return { keyDigest: digest };
    if (key === null) return null;
    // A user's key signs its user in; the session keeps the key's role as its cap and ends with the key.
    const live = await liveKey(options.keys, users, keyDigestOf(key), new Date());
    return live ? { userId: live.user._id, via: 'session', keyId: live.key._id } : null;
  }

  router.get('/login', async (ctx) => {
    if (open || (await identify(ctx)).caller) return ctx.redirect(safeNext(ctx.query.next));
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = loginPage(safeNext(ctx.query.next), undefined, links);
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
    if (open) return htmlAnswer(ctx, 401, next, 'This server needs no sign-in.');
    const client = clientAddress(ctx);
    const wait = attempts.retryAfterSeconds(client);
    if (wait > 0) {
      ctx.set('Retry-After', String(wait));
      return htmlAnswer(ctx, 429, next, `Too many failed sign-ins from your address: try again in ${wait} s.`);
    }
    const holder = await holderOf(form);
    if (!holder) {
      attempts.failed(client);
      const what = form.has('username') ? 'That username and password do not match' : 'That API key is not valid';
      return htmlAnswer(ctx, 401, next, `${what}.`);
    }
    await sessions.issue(ctx, holder);
    noteAudit(ctx.state, signInNote(holder));
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
