import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, makeKey, type MadeKey, type MadeUser, type RoleName, userWithKey } from '../support/access';
import { startApi, type TestApi } from '../support/api';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { client } from '../support/http';

const ADMIN_KEY = 'spur_revocation-admin-key-0123456789';
const PASSWORD = 'correct horse battery';

/** One api process as a browser or client sees it: its origin, and requests by key or by session cookie. */
interface Side {
  name: string;
  origin: string;
}

/** The status of `GET /api/wf/` with these credentials: 200 while they hold, 401 once they do not. */
async function readStatus(side: Side, headers: Record<string, string>): Promise<number> {
  const res = await fetch(`${side.origin}/api/wf/`, { headers, redirect: 'manual' });
  await res.arrayBuffer();
  return res.status;
}

/** Signs in on the login page with a username and password; answers the session cookie (`name=value`). */
async function signIn(side: Side, username: string, password = PASSWORD): Promise<string> {
  const res = await fetch(`${side.origin}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: side.origin },
    body: new URLSearchParams({ username, password, next: '/' }).toString(),
  });
  assert.equal(res.status, 303, `signing ${username} in on ${side.name}: ${res.status} ${await res.text()}`);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  assert.match(cookie, /^spur_session=.+/);
  return cookie;
}

/**
 * Two api processes on one database, as a fleet behind a load balancer: what one of them revokes
 * (a key, a user, a session) the other refuses on the very next request, since every request looks
 * its key, session and user up in MongoDB.
 */
describe('security: revocation holds at once on every api process', function () {
  this.timeout(120_000);
  let a: TestApi;
  let b: ApiProcess;
  let sideA: Side;
  let sideB: Side;
  let admin: ReturnType<typeof client>;
  let counter = 0;

  before(async () => {
    a = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY), SPUR_WEB_UI: 'false' });
    b = await startApiProcess({ ...a.env, SPUR_WEB_UI: 'false' });
    sideA = { name: 'A', origin: new URL(a.baseUrl).origin };
    sideB = { name: 'B', origin: new URL(b.baseUrl).origin };
    admin = client(a.baseUrl, bearer(ADMIN_KEY));
  });
  after(async () => {
    await b?.process.stop();
    await a?.close();
  });

  /** A user with a password and a key, and a session signed in on B with the password; all three work on both processes. */
  async function holder(role: RoleName = 'builder'): Promise<{ user: MadeUser; key: MadeKey; cookie: string }> {
    const { user, key } = await userWithKey(admin, `revoked-${++counter}`, role, PASSWORD);
    const cookie = await signIn(sideB, user.username);
    for (const side of [sideA, sideB]) {
      assert.equal(await readStatus(side, bearer(key.key)), 200, `the key works on ${side.name}`);
      assert.equal(await readStatus(side, { cookie }), 200, `the session works on ${side.name}`);
    }
    return { user, key, cookie };
  }

  async function assertRefusedOnBoth(what: string, headers: Record<string, string>): Promise<void> {
    for (const side of [sideB, sideA]) assert.equal(await readStatus(side, headers), 401, `${what} on ${side.name}`);
  }

  it('a key revoked on A is refused on B on the very next request', async () => {
    const { key } = await holder();
    const other = await makeKey(admin, { name: 'kept', user_id: key.user_id });
    const revoked = await admin.delete(`/access/keys/${key.id}/`);
    assert.equal(revoked.status, 204, revoked.text);
    await assertRefusedOnBoth('the revoked key', bearer(key.key));
    assert.equal(await readStatus(sideB, bearer(other.key)), 200, "the user's other key still works");
  });

  it('a key its holder revokes on A is refused on B at once', async () => {
    const { key } = await holder('viewer');
    const own = await fetch(`${a.baseUrl}/access/keys/${key.id}/`, { method: 'DELETE', headers: bearer(key.key) });
    assert.equal(own.status, 204, await own.text());
    await assertRefusedOnBoth('the key revoked by itself', bearer(key.key));
  });

  it('a user disabled on A: their key and their browser session are refused on both, and they cannot sign in again', async () => {
    const { user, key, cookie } = await holder();
    const disabled = await admin.put(`/access/users/${user.id}/`, { disabled: true });
    assert.equal(disabled.status, 200, disabled.text);
    assert.equal(disabled.body.disabled, true);
    await assertRefusedOnBoth('the key of the disabled user', bearer(key.key));
    await assertRefusedOnBoth('the session of the disabled user', { cookie });
    const again = await fetch(`${sideB.origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: sideB.origin },
      body: new URLSearchParams({ username: user.username, password: PASSWORD, next: '/' }).toString(),
    });
    assert.equal(again.status, 401, 'a disabled user cannot sign in');
    assert.equal(again.headers.get('set-cookie'), null);
    // Enabled again, they sign in anew; what disabling revoked stays revoked.
    assert.equal((await admin.put(`/access/users/${user.id}/`, { disabled: false })).status, 200);
    await assertRefusedOnBoth('the key revoked by disabling, after enabling', bearer(key.key));
    await assertRefusedOnBoth('the session ended by disabling, after enabling', { cookie });
    assert.equal(await readStatus(sideA, { cookie: await signIn(sideB, user.username) }), 200);
  });

  it('a role lowered on A holds on B at once, for the key and the session', async () => {
    const { user, key, cookie } = await holder('builder');
    const lowered = await admin.put(`/access/users/${user.id}/`, { role: 'viewer' });
    assert.equal(lowered.status, 200, lowered.text);
    const build = (headers: Record<string, string>) =>
      fetch(`${sideB.origin}/api/wf/`, {
        method: 'POST',
        headers: { ...headers, origin: sideB.origin, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `by a former builder ${counter}` }),
      });
    for (const [what, headers] of [
      ['key', bearer(key.key)],
      ['session', { cookie }],
    ] as const) {
      const res = await build(headers);
      assert.equal(res.status, 403, `${what}: ${await res.text()}`);
      assert.equal(await readStatus(sideB, headers), 200, `the ${what} still reads`);
    }
    const names = ((await admin.get('/wf/?page_size=100')).body as { name: string }[]).map((w) => w.name);
    assert.ok(!names.some((n) => n.startsWith('by a former builder')), 'no workflow was made');
  });

  it('a session ended by /logout on A is refused on B', async () => {
    const { cookie } = await holder();
    const out = await fetch(`${sideA.origin}/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: sideA.origin },
    });
    assert.equal(out.status, 303);
    await assertRefusedOnBoth('the session ended by /logout', { cookie });
  });

  it('a user deleted on A: their key and their session are refused on both', async () => {
    const { user, key, cookie } = await holder();
    const deleted = await admin.delete(`/access/users/${user.id}/`);
    assert.equal(deleted.status, 204, deleted.text);
    await assertRefusedOnBoth('the key of the deleted user', bearer(key.key));
    await assertRefusedOnBoth('the session of the deleted user', { cookie });
    assert.equal((await admin.get(`/access/users/${user.id}/`)).status, 404);
    const keys = (await admin.get('/access/keys/')).body as { user_id: string }[];
    assert.ok(!keys.some((k) => k.user_id === user.id), 'no key of theirs is left');
  });

  it('an expired key is refused on both, and so is the session it signed in', async () => {
    const { user } = await userWithKey(admin, `expiring-${++counter}`, 'operator');
    const expiresAt = Date.now() + 1000;
    const key = await makeKey(admin, {
      name: 'a second',
      user_id: user.id,
      expires_at: new Date(expiresAt).toISOString(),
    });
    // While it lives (when the answer came before the expiry, the server checked before it): it works.
    const login = await fetch(`${sideB.origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: sideB.origin },
      body: new URLSearchParams({ api_key: key.key, next: '/' }).toString(),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const live = await readStatus(sideA, bearer(key.key));
    if (Date.now() < expiresAt) {
      assert.equal(login.status, 303, 'the key signs in while it lives');
      assert.equal(live, 200, 'the key works while it lives');
    }
    while (Date.now() <= expiresAt) await new Promise((r) => setTimeout(r, expiresAt + 10 - Date.now()));
    await assertRefusedOnBoth('the expired key', bearer(key.key));
    if (cookie) await assertRefusedOnBoth('the session of the expired key', { cookie });
    const relogin = await fetch(`${sideA.origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: sideA.origin },
      body: new URLSearchParams({ api_key: key.key, next: '/' }).toString(),
    });
    assert.equal(relogin.status, 401, 'an expired key signs no one in');
  });
});
