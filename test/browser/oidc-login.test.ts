import assert from 'node:assert/strict';
import type { TestApi } from '../support/api';
import type { TestBrowser } from '../support/browser';
import { client } from '../support/http';
import { ROLE_CLAIM, signInAtProvider, type TestOidcProvider } from '../support/oidc-provider';
import { type OidcSignInStack, startOidcSignIn } from '../support/oidc-sign-in';

const ADMIN_KEY = 'spur_oidc-browser-admin-key';

describe('browser: signing in with an OpenID provider', function () {
  this.timeout(180_000);
  let api: TestApi;
  let idp: TestOidcProvider;
  let browser: TestBrowser;
  let origin: string;
  let admin: ReturnType<typeof client>;
  let stack: OidcSignInStack | undefined;

  before(async () => {
    stack = await startOidcSignIn(ADMIN_KEY);
    ({ api, idp, browser, origin } = stack);
    admin = client(api.baseUrl, { authorization: `Bearer ${ADMIN_KEY}` });
  });
  after(async () => {
    await stack?.close();
  });

  /** What `/api/access/me/` answers the browser's page (its own cookies). */
  const me = (): Promise<{ status: number; body: any }> =>
    browser.page.evaluate(async () => {
      const res = await fetch('/api/access/me/');
      return { status: res.status, body: res.status === 200 ? await res.json() : null };
    });
  const userNamed = async (username: string) =>
    (await admin.get('/access/users/?page_size=100')).body.find((u: { username: string }) => u.username === username);
  const sessionCookie = async () =>
    (await browser.context.cookies(origin)).find((c) => c.name === 'spur_session') ?? null;

  /** A fresh browser state (no session here, none at the provider), then the login page's button and the provider's pages. */
  async function signIn(login: string, from = '/dashboard'): Promise<void> {
    await browser.context.clearCookies();
    const { page } = browser;
    await page.goto(`${origin}${from}`);
    await page.waitForURL(`${origin}/login?next=${encodeURIComponent(from)}`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await page.waitForURL(new RegExp(`^${idp.issuer}/`));
    await signInAtProvider(page, login);
  }

  it('login page → "Sign in with Test IdP" → the provider → back where the browser was going, signed in via oidc with the role the claim names', async () => {
    idp.accounts.set('alice', {
      preferred_username: 'alice',
      email: 'alice@example.org',
      name: 'Alice',
      [ROLE_CLAIM]: 'builder',
    });
    await signIn('alice');
    await browser.page.waitForURL(`${origin}/dashboard`);
    await browser.page.getByText('dashboard').waitFor();

    const { status, body } = await me();
    assert.equal(status, 200);
    assert.equal(body.via, 'oidc');
    assert.equal(body.role, 'builder');
    assert.equal(body.username, 'alice');
    assert.equal(body.user.oidc, true);
    assert.equal(body.user.email, 'alice@example.org');
    assert.equal(body.user.display_name, 'Alice');
    const cookies = await browser.context.cookies(origin);
    assert.deepEqual(
      cookies.map((c) => [c.name, c.httpOnly, c.sameSite]),
      [['spur_session', true, 'Strict']],
      'the session cookie alone: the sign-in binding cookie is gone',
    );
    assert.equal(await api.mongo.collection('oidc_sign_ins').countDocuments(), 0, 'the started sign-in was used up');
    const signIns = await admin.get(`/access/audit/?action=session.sign_in&target_id=${body.user.id}`);
    assert.deepEqual(
      signIns.body.map((e: { actor: unknown; outcome: number }) => [e.actor, e.outcome]),
      [[{ user_id: body.user.id, via: 'oidc' }, 200]],
      'the audit trail names who the provider proved this is',
    );
  });

  it('a second account whose token has no role claim gets the default role (viewer)', async () => {
    idp.accounts.set('bob', { preferred_username: 'bob' });
    await signIn('bob');
    await browser.page.waitForURL(`${origin}/dashboard`);
    const { status, body } = await me();
    assert.equal(status, 200);
    assert.deepEqual([body.username, body.role, body.via], ['bob', 'viewer', 'oidc']);
  });

  it('every sign-in sets the role from the claim: an admin’s change in Spur is overwritten; a value naming no role gives the default', async () => {
    const alice = await userNamed('alice');
    assert.equal((await admin.put(`/access/users/${alice.id}/`, { role: 'admin' })).status, 200);
    idp.accounts.set('alice', { preferred_username: 'alice', [ROLE_CLAIM]: 'operator' });
    await signIn('alice');
    await browser.page.waitForURL(`${origin}/dashboard`);
    assert.equal((await me()).body.role, 'operator');

    idp.accounts.set('alice', { preferred_username: 'alice', [ROLE_CLAIM]: 'superuser' });
    await signIn('alice');
    await browser.page.waitForURL(`${origin}/dashboard`);
    assert.equal((await me()).body.role, 'viewer');
    assert.equal((await userNamed('alice')).id, alice.id, 'the same user each time');
  });

  it('a disabled user is refused at the callback: no session, /api/access/me/ answers 401', async () => {
    const bob = await userNamed('bob');
    assert.equal((await admin.put(`/access/users/${bob.id}/`, { disabled: true })).status, 200);
    await signIn('bob');
    await browser.page.getByRole('alert').getByText('This account is disabled.').waitFor();
    assert.equal(new URL(browser.page.url()).pathname, '/login/oidc/callback');
    assert.equal(await sessionCookie(), null);
    assert.equal((await me()).status, 401);
    assert.equal((await userNamed('bob')).disabled, true);
    const [refused] = (await admin.get(`/access/audit/?action=session.sign_in&target_id=${bob.id}`)).body;
    assert.deepEqual([refused.actor, refused.outcome], [{ user_id: bob.id, via: 'oidc' }, 403]);
  });

  it('links accounts by issuer and subject only: a provider account named like a local admin gets a new user of its own', async () => {
    const local = await admin.post('/access/users/', {
      username: 'carol',
      role: 'admin',
      password: 'a password of carol',
    });
    assert.equal(local.status, 201);
    idp.accounts.set('carol', { preferred_username: 'carol', email: 'carol@example.org', [ROLE_CLAIM]: 'nobody' });
    await signIn('carol');
    await browser.page.waitForURL(`${origin}/dashboard`);
    const { body } = await me();
    assert.deepEqual([body.username, body.role], ['carol-2', 'viewer']);
    assert.notEqual(body.user.id, local.body.id);
    const after = await admin.get(`/access/users/${local.body.id}/`);
    assert.deepEqual([after.body.role, after.body.oidc], ['admin', false], 'the local carol is untouched');
  });

  it('`next` only ever leads to a path of this server (an open redirect is cut to /)', async () => {
    idp.accounts.set('dave', { preferred_username: 'dave' });
    // A tab or newline after the first slash: browsers drop them from a URL, leaving //evil.example.
    for (const next of [
      '//evil.example/steal',
      'https://evil.example/steal',
      '/\\evil.example',
      '/\t/evil.example/steal',
      '/\n/evil.example/steal',
      '/\r\n/evil.example/steal',
    ]) {
      await browser.context.clearCookies();
      await browser.page.goto(`${origin}/login/oidc?next=${encodeURIComponent(next)}`);
      await signInAtProvider(browser.page, 'dave');
      await browser.page.waitForURL(`${origin}/`);
      assert.equal((await me()).body.username, 'dave', next);
    }
    // The provider's own pages ask for web fonts (blocked off the machine); nothing went to evil.example.
    assert.deepEqual(
      browser.blocked.filter((url) => url.includes('evil.example')),
      [],
    );
  });
});
