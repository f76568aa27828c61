import { createHmac } from 'node:crypto';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { noteAudit } from '../access/audit-note';
import { type OidcClient, signInFailureOf } from '../access/oidc-client';
import { type OidcIdentity, signInOidcAccount } from '../access/oidc-accounts';
import type { OidcSettings } from '../config/settings';
import type { AccessUserStore } from '../db/access-users';
import type { OidcSignInStore } from '../db/oidc-sign-ins';
import {
  type BrowserSessions,
  newRandomId,
  presentedRandomId,
  requestIsTls,
  setSiteCookie,
} from '../http/browser-session';
import type { LoginAttempts } from '../http/login-attempts';
import type { Logger } from '../logger';
import { safeNext } from './login.routes';
import { loginPage, type SignInLink, signedInPage } from './pages';

/** Where a sign-in with the OpenID provider starts, and where the provider sends the browser back. */
export const OIDC_START = '/login/oidc';
export const OIDC_CALLBACK = '/login/oidc/callback';

/** How long a started sign-in waits for its callback (the person signs in at the provider meanwhile). */
const SIGN_IN_TTL_MS = 10 * 60_000;

/** The cookie binding a started sign-in to its browser: the `__Host-` name over TLS, as the session's. */
const cookieName = (ctx: Context) => (requestIsTls(ctx) ? '__Host-spur_oidc' : 'spur_oidc');

export interface OidcSignInOptions {
  settings: OidcSettings;
  client: OidcClient;
  store: OidcSignInStore;
  users: AccessUserStore;
  sessions: BrowserSessions;
  /** Keys the stored ids of started sign-ins (the server's secret key, so every replica finds them). */
  secretKey: Buffer;
  /** Starts per client address (each writes a record): limited as failed logins are. */
  starts: LoginAttempts;
  clientAddress: (ctx: Context) => string;
  logger: Logger;
  clock?: () => number;
}

/** The login page's button for the provider. */
export const oidcSignInLink = (settings: OidcSettings): SignInLink => ({
  label: `Sign in with ${settings.label}`,
  href: OIDC_START,
});

/**
 * Sign-in with an OpenID provider (authorization code flow with PKCE). `GET /login/oidc` records
 * a new sign-in (state, nonce, PKCE verifier, where to go next) under a random id held in a
 * short-lived HttpOnly SameSite=Lax cookie (Lax: the provider's redirect back is a top-level GET
 * from another site), and sends the browser to the provider. `GET /login/oidc/callback` takes that
 * record (once: a replay, a second tab's callback or one from another browser finds none), lets
 * openid-client check the answer and the ID token, finds or provisions the user and issues a
 * browser session (`via: "oidc"`). Both leave no session behind when anything fails.
 */
export function mountOidcSignIn(router: Router, options: OidcSignInOptions): void {
  const { settings, client, store, users, sessions, starts, clientAddress, logger, clock = Date.now } = options;
  const idKey = createHmac('sha256', options.secretKey).update('spur oidc sign-in id v1').digest();
  const storedId = (id: string) => createHmac('sha256', idKey).update(id).digest('hex');
  const links = [oidcSignInLink(settings)];
  const rules = { roleClaim: settings.roleClaim, defaultRole: settings.defaultRole };

  const refuse = (ctx: Context, status: number, message: string) => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = loginPage('/', message, links);
  };
  const setBindingCookie = (ctx: Context, value: string, maxAgeSeconds: number) =>
    setSiteCookie(ctx, { name: cookieName(ctx), value, maxAgeSeconds, sameSite: 'Lax' });

  router.get(OIDC_START, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const address = clientAddress(ctx);
    const wait = starts.retryAfterSeconds(address);
    if (wait > 0) {
      ctx.set('Retry-After', String(wait));
      return refuse(ctx, 429, `Too many sign-ins from your address: try again in ${wait} s.`);
    }
    starts.failed(address); // every start counts: it writes a record anyone could ask for
    const redirectUri = `${settings.publicUrl ?? `${requestIsTls(ctx) ? 'https' : 'http'}://${ctx.host}`}${OIDC_CALLBACK}`;
    const checks = client.newChecks();
    let target: URL;
    try {
      target = await client.authorizationUrl(redirectUri, checks);
    } catch (err) {
      logger.warn({ err }, 'OpenID provider discovery failed');
      return refuse(ctx, 502, `${settings.label} could not be reached: try again later.`);
    }
    const id = newRandomId();
    const now = clock();
    await store.create(
      storedId(id),
      { ...checks, redirectUri, next: safeNext(ctx.query.next), expiresAt: new Date(now + SIGN_IN_TTL_MS) },
      new Date(now),
    );
    setBindingCookie(ctx, id, SIGN_IN_TTL_MS / 1000);
    ctx.redirect(target.href);
  });

  router.get(OIDC_CALLBACK, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    // A failure is recorded too, with the status it was answered with.
    noteAudit(ctx.state, { action: 'session.sign_in', target: { type: 'user', id: null } });
    const id = presentedRandomId(ctx, cookieName(ctx));
    setBindingCookie(ctx, '', 0);
    const pending = id === null ? null : await store.take(storedId(id), new Date(clock()));
    if (!pending)
      return refuse(
        ctx,
        400,
        'This sign-in was not started in this browser, was already used, or expired: sign in again.',
      );
    const callbackUrl = new URL(pending.redirectUri);
    callbackUrl.search = ctx.querystring;
    let claims: OidcIdentity;
    try {
      claims = (await client.claimsOf(callbackUrl, pending)) as OidcIdentity;
    } catch (err) {
      logger.warn({ err }, 'OpenID sign-in refused');
      const failure = signInFailureOf(err);
      if (failure.kind === 'unreachable')
        return refuse(ctx, 502, `${settings.label} could not be reached: try again later.`);
      if (failure.kind === 'refused')
        return refuse(ctx, 401, `${settings.label} did not sign you in (${failure.error}).`);
      return refuse(ctx, 401, `The sign-in with ${settings.label} did not check out: sign in again.`);
    }
    const outcome = await signInOidcAccount(users, claims, rules);
    if ('disabled' in outcome) {
      const id = outcome.disabled._id;
      noteAudit(ctx.state, {
        action: 'session.sign_in',
        target: { type: 'user', id },
        actor: { user_id: id, via: 'oidc' },
      });
      return refuse(ctx, 403, 'This account is disabled.');
    }
    const { user } = outcome;
    await sessions.issue(ctx, { userId: user._id, via: 'oidc' });
    // The provider proved who this is: the actor, as a password proves it on the login form.
    noteAudit(ctx.state, {
      action: 'session.sign_in',
      target: { type: 'user', id: user._id },
      actor: { user_id: user._id, via: 'oidc' },
    });
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = signedInPage(pending.next);
  });
}
