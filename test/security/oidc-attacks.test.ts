import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import type { TestBrowser } from '../support/browser';
import { type PlainReply, plainRequest } from '../support/browser-login';
import {
  type IdTokenRewrite,
  oidcEnv,
  signIdToken,
  signInAtProvider,
  type TestOidcProvider,
} from '../support/oidc-provider';
import { type OidcSignInStack, startOidcSignIn } from '../support/oidc-sign-in';

const ADMIN_KEY = 'spur_oidc-attacks-admin-key';

/** The `spur_session=<id>` a reply sets, or null (a cleared cookie counts as none). */
function sessionSetBy(reply: PlainReply): string | null {
  const set = (reply.headers['set-cookie'] ?? []).map((c) => c.split(';')[0] ?? '');
  return set.find((c) => /^spur_session=.+/.test(c)) ?? null;
}

/**
 * Attacks on the OpenID sign-in (OAuth 2.0 Security BCP, RFC 9700; OpenID Connect Core's ID token
 * validation): each is played through the real flow (a browser at the real provider, with a real
 * proxy in front of its token endpoint where the ID token must be tampered with), and each ends with
 * nobody signed in: no session cookie issued, `/api/access/me/` 401, no user provisioned.
 */
describe('security: attacks on the OpenID sign-in', function () {
  this.timeout(240_000);
  let api: TestApi;
  let idp: TestOidcProvider;
  let browser: TestBrowser;
  let origin: string;
  let stack: OidcSignInStack | undefined;

  before(async () => {
    stack = await startOidcSignIn(ADMIN_KEY);
    ({ api, idp, browser, origin } = stack);
  });
  afterEach(() => {
    idp.rewrite = null;
  });
  after(async () => {
    await stack?.close();
  });

  const get = (path: string, cookie = '') => plainRequest(origin, 'GET', path, { headers: cookie ? { cookie } : {} });
  const usersNamed = (username: string) => api.mongo.collection('access_users').countDocuments({ username });
  const meInBrowser = () => browser.page.evaluate(async () => (await fetch('/api/access/me/')).status);

  /** Nobody is signed in in the browser, and no user was provisioned for `login`. */
  async function assertNobodyIn(login: string): Promise<void> {
    const cookies = await browser.context.cookies(origin);
    assert.deepEqual(
      cookies.filter((c) => c.name === 'spur_session'),
      [],
      'no session cookie',
    );
    assert.equal(await meInBrowser(), 401);
    assert.equal(await usersNamed(login), 0, `no user '${login}' provisioned`);
  }

  /**
   * The browser signs in at the provider as `login` after a start at Spur; its way back (the callback
   * URL with code and state) is held by the provider's proxy before Spur sees it. The browser keeps
   * its binding cookie.
   */
  async function callbackOf(login: string): Promise<{ url: string; cookie: string }> {
    idp.accounts.set(login, { preferred_username: login });
    await browser.context.clearCookies();
    const held = new Promise<string>((resolve) => (idp.holdCallback = resolve));
    try {
      await browser.page.goto(`${origin}/login/oidc`);
      await signInAtProvider(browser.page, login);
      const url = await held;
      const binding = (await browser.context.cookies(origin)).find((c) => c.name === 'spur_oidc');
      assert.ok(binding, 'the start left its binding cookie');
      return { url, cookie: `spur_oidc=${binding.value}` };
    } finally {
      idp.holdCallback = null;
    }
  }

  /** A start from a client of its own (no browser): its binding cookie and the state sent to the provider. */
  async function plainStart(): Promise<{ cookie: string; state: string }> {
    const start = await get('/login/oidc');
    assert.equal(start.status, 302);
    const cookie = (start.headers['set-cookie'] ?? [])[0]?.split(';')[0] ?? '';
    assert.match(cookie, /^spur_oidc=[A-Za-z0-9_-]{43}$/);
    const state = new URL(String(start.headers.location)).searchParams.get('state');
    assert.ok(state);
    return { cookie, state };
  }

  /** The whole flow in the browser with the token endpoint's answer rewritten: refused, nobody in. */
  async function refusedWith(login: string, rewrite: IdTokenRewrite): Promise<void> {
    const { url } = await callbackOf(login);
    const answered = idp.tokenAnswers.length;
    idp.rewrite = rewrite;
    const reply = await browser.page.goto(url);
    assert.equal(reply?.status(), 401);
    await browser.page.getByRole('alert').getByText('did not check out').waitFor();
    assert.deepEqual(
      idp.tokenAnswers.slice(answered),
      [200],
      'the provider answered the code: the ID token was refused',
    );
    await assertNobodyIn(login);
  }

  it('control: the proxy re-signing an unchanged ID token with the provider’s key lets the sign-in through', async () => {
    const { url } = await callbackOf('olivia');
    idp.rewrite = ({ claims }, keys) => signIdToken(claims, keys.provider.privateKey, keys.provider.kid);
    await browser.page.goto(url);
    await browser.page.waitForURL(`${origin}/`);
    assert.equal(await meInBrowser(), 200);
    assert.equal(await usersNamed('olivia'), 1);
  });

  it('a forged ID token (signed by a key the provider never published, under its key id) is refused', async () => {
    await refusedWith('mallory', ({ claims }, keys) =>
      signIdToken(claims, keys.stranger.privateKey, keys.provider.kid),
    );
  });

  it('an unsigned ID token (alg none) is refused', async () => {
    await refusedWith('mallory', async ({ claims }) => {
      const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
    });
  });

  it('an expired ID token, validly signed, is refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refusedWith('mallory', ({ claims }, keys) =>
      signIdToken({ ...claims, iat: now - 1200, exp: now - 600 }, keys.provider.privateKey, keys.provider.kid),
    );
  });

  it('an ID token with another nonce (one from another sign-in), validly signed, is refused', async () => {
    await refusedWith('mallory', ({ claims }, keys) =>
      signIdToken({ ...claims, nonce: 'the-nonce-of-another-sign-in' }, keys.provider.privateKey, keys.provider.kid),
    );
  });

  it('an ID token for another client (audience) or from another issuer, validly signed, is refused', async () => {
    await refusedWith('mallory', ({ claims }, keys) =>
      signIdToken({ ...claims, aud: 'another-client' }, keys.provider.privateKey, keys.provider.kid),
    );
    await refusedWith('mallory', ({ claims }, keys) =>
      signIdToken({ ...claims, iss: 'http://localhost:1' }, keys.provider.privateKey, keys.provider.kid),
    );
  });

  it('a wrong state is refused, and it uses the sign-in up: the right callback after it is refused too', async () => {
    const { url } = await callbackOf('walter');
    const wrong = new URL(url);
    wrong.searchParams.set('state', 'a-state-spur-never-sent');
    const answered = idp.tokenAnswers.length;
    assert.equal((await browser.page.goto(wrong.href))?.status(), 401);
    assert.equal((await browser.page.goto(url))?.status(), 400, 'the binding cookie was cleared and its record taken');
    await browser.page.getByRole('alert').getByText('was already used').waitFor();
    assert.equal(idp.tokenAnswers.length, answered, 'the code was never sent to the token endpoint');
    await assertNobodyIn('walter');
  });

  it('a replayed callback (its URL and binding cookie copied) signs nobody in the second time', async () => {
    const { url, cookie } = await callbackOf('rita');
    const first = await get(url.slice(origin.length), cookie);
    assert.equal(first.status, 200);
    const session = sessionSetBy(first);
    assert.ok(session, 'the first use signs in');
    const replay = await get(url.slice(origin.length), cookie);
    assert.equal(replay.status, 400);
    assert.equal(sessionSetBy(replay), null);
    assert.equal(await usersNamed('rita'), 1, 'one user, from the first use');
    // The replay's own (cookie-less) view: nobody.
    assert.equal((await get('/api/access/me/')).status, 401);
  });

  it('a callback with no prior start in that browser (login CSRF: the attacker’s code sent to a victim) is refused without spending the code', async () => {
    const { url } = await callbackOf('craig');
    const answered = idp.tokenAnswers.length;
    const victim = await get(url.slice(origin.length));
    assert.equal(victim.status, 400);
    assert.equal(sessionSetBy(victim), null);
    assert.equal(idp.tokenAnswers.length, answered, 'nothing was asked of the provider');
    assert.equal(await usersNamed('craig'), 0);
    // The browser that did start it still can finish: the attempt took nothing from it.
    await browser.page.goto(url);
    await browser.page.waitForURL(`${origin}/`);
    assert.equal(await meInBrowser(), 200);
  });

  it('a code used once is refused the second time, even with a fresh start and its state', async () => {
    const { url } = await callbackOf('uma');
    await browser.page.goto(url);
    await browser.page.waitForURL(`${origin}/`);
    const fresh = await plainStart();
    const reused = new URL(url);
    reused.searchParams.set('state', fresh.state);
    const answered = idp.tokenAnswers.length;
    const reply = await get(`${reused.pathname}${reused.search}`, fresh.cookie);
    assert.equal(reply.status, 401);
    assert.equal(sessionSetBy(reply), null);
    assert.deepEqual(idp.tokenAnswers.slice(answered), [400], 'the provider refused the spent code');
    assert.equal((await get('/api/access/me/', fresh.cookie)).status, 401);
  });

  it('code injection: an unspent code from another browser’s sign-in, in a victim’s flow with the victim’s state, fails PKCE', async () => {
    const attacker = await callbackOf('ingrid');
    const victim = await plainStart();
    const injected = new URL(attacker.url);
    injected.searchParams.set('state', victim.state);
    const answered = idp.tokenAnswers.length;
    const reply = await get(`${injected.pathname}${injected.search}`, victim.cookie);
    assert.equal(reply.status, 401);
    assert.equal(sessionSetBy(reply), null);
    assert.deepEqual(idp.tokenAnswers.slice(answered), [400], 'the provider refused the code for the wrong verifier');
    assert.equal(await usersNamed('ingrid'), 0);
  });

  it('mix-up: a callback naming another issuer (`iss`, RFC 9207) is refused before its code goes anywhere', async () => {
    const { url } = await callbackOf('mona');
    const mixed = new URL(url);
    assert.equal(mixed.searchParams.get('iss'), idp.issuer, 'the provider names itself in its answers');
    mixed.searchParams.set('iss', 'https://attacker.example');
    const answered = idp.tokenAnswers.length;
    assert.equal((await browser.page.goto(mixed.href))?.status(), 401);
    assert.equal(idp.tokenAnswers.length, answered, 'the code was not sent to any token endpoint');
    await assertNobodyIn('mona');
  });

  it('binds with a short-lived Lax cookie (`__Host-`, Secure over TLS), sends SPUR_PUBLIC_URL’s redirect URI, and limits starts per address', async () => {
    const other = await startApi({
      SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY),
      SPUR_LOGIN_MAX_FAILURES: '2',
      ...oidcEnv(idp.issuer),
      SPUR_PUBLIC_URL: 'https://spur.example.com/tools/',
    });
    try {
      const otherOrigin = other.baseUrl.replace(/\/api$/, '');
      const start = await plainRequest(otherOrigin, 'GET', '/login/oidc', {
        headers: { 'x-forwarded-proto': 'https' },
      });
      assert.equal(start.status, 302);
      const target = new URL(String(start.headers.location));
      assert.equal(target.origin, idp.issuer);
      assert.equal(target.searchParams.get('redirect_uri'), 'https://spur.example.com/tools/login/oidc/callback');
      assert.equal(target.searchParams.get('code_challenge_method'), 'S256');
      assert.equal(target.searchParams.get('response_type'), 'code');
      const cookie = (start.headers['set-cookie'] ?? [])[0] ?? '';
      assert.match(
        cookie,
        /^__Host-spur_oidc=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/,
      );
      assert.equal((await plainRequest(otherOrigin, 'GET', '/login/oidc')).status, 302);
      const third = await plainRequest(otherOrigin, 'GET', '/login/oidc');
      assert.equal(third.status, 429);
      assert.ok(Number(third.headers['retry-after']) > 0);
      assert.equal(third.headers['set-cookie'], undefined);
      assert.equal(
        await other.mongo.collection('oidc_sign_ins').countDocuments(),
        2,
        'the refused start recorded nothing',
      );
    } finally {
      await other.close();
    }
  });

  it('the GET routes are the only anonymous ones: other methods on them are refused', async () => {
    for (const path of ['/login/oidc', '/login/oidc/callback']) {
      const post = await plainRequest(origin, 'POST', path, {
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'code=x&state=y',
      });
      assert.equal(post.status, 401, path);
      assert.equal(sessionSetBy(post), null);
    }
  });
});
