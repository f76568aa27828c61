import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, makeKey, makeUser, userWithKey } from '../support/access';
import { startApi, type TestApi, withApi } from '../support/api';
import { client } from '../support/http';
import { pollDelays } from '../support/poll';

const ADMIN_KEY = 'spur_access-api-admin-key-0123456789';
const PASSWORD = 'a password of some length';

/** Every document of every collection as text: what a stolen database would show. */
async function databaseText(api: TestApi): Promise<string> {
  const db = api.mongo.db!;
  const parts: string[] = [];
  for (const { name } of await db.listCollections().toArray())
    parts.push(name, JSON.stringify(await db.collection(name).find({}).toArray()));
  return parts.join('\n');
}

/** Polls `read` until it answers something, or fails after 10 s naming `what`. */
async function eventually<T>(what: string, read: () => Promise<T | null | undefined>): Promise<T> {
  const wait = pollDelays();
  const until = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > until) assert.fail(`${what} did not happen`);
    await wait();
  }
}

describe('e2e: users, API keys and /access/me/', function () {
  this.timeout(120_000);
  let api: TestApi;
  let origin: string;
  let admin: ReturnType<typeof client>;
  let counter = 0;
  const unique = (name: string) => `${name}-${++counter}`;

  async function signIn(username: string, password: string): Promise<{ status: number; cookie: string }> {
    const res = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ username, password, next: '/' }).toString(),
    });
    await res.arrayBuffer();
    return { status: res.status, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '' };
  }

  before(async () => {
    api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY), SPUR_WEB_UI: 'false' });
    origin = new URL(api.baseUrl).origin;
    admin = client(api.baseUrl, bearer(ADMIN_KEY));
  });
  after(async () => api?.close());

  describe('users', () => {
    it('creates a user (201) whose password is never answered and is stored only as an scrypt hash', async () => {
      const username = unique('ada');
      const res = await admin.post('/access/users/', {
        username,
        role: 'builder',
        email: 'ada@example.test',
        display_name: 'Ada',
        password: PASSWORD,
      });
      assert.equal(res.status, 201, res.text);
      assert.match(res.body.id, /^UA\d+$/);
      assert.deepEqual(
        { ...res.body, id: undefined, created_at: undefined },
        {
          id: undefined,
          username,
          email: 'ada@example.test',
          display_name: 'Ada',
          role: 'builder',
          disabled: false,
          has_password: true,
          oidc: false,
          created_at: undefined,
          last_seen_at: null,
        },
      );
      const reads = [await admin.get(`/access/users/${res.body.id}/`), await admin.get('/access/users/')];
      for (const answer of [res, ...reads]) {
        assert.ok(answer.status === 200 || answer === res, answer.text);
        assert.ok(!answer.text.includes(PASSWORD), 'no password in an answer');
        assert.ok(!/password_hash|scrypt\$/.test(answer.text), 'no password hash in an answer');
      }
      const stored = await api.mongo.db!.collection('access_users').findOne({ username });
      assert.match(String(stored?.password_hash), /^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
      assert.ok(!(await databaseText(api)).includes(PASSWORD), 'the password is nowhere in the database');
    });

    it('lists users oldest first and reads one; an unknown id is 404, a malformed one 422', async () => {
      const first = await makeUser(admin, { username: unique('first'), role: 'viewer' });
      const second = await makeUser(admin, { username: unique('second'), role: 'admin' });
      const list = await admin.get('/access/users/?page_size=100');
      assert.equal(list.status, 200, list.text);
      const ids = (list.body as { id: string }[]).map((u) => u.id);
      assert.ok(ids.indexOf(first.id) >= 0 && ids.indexOf(first.id) < ids.indexOf(second.id), ids.join(','));
      const one = await admin.get(`/access/users/${second.id}/`);
      assert.equal(one.status, 200);
      assert.equal(one.body.username, second.username);
      assert.equal(one.body.has_password, false);
      assert.equal((await admin.get('/access/users/UA999999/')).status, 404);
      assert.equal((await admin.get('/access/users/K1/')).status, 422);
    });

    it('refuses a duplicate username (409) and bad bodies (422), storing nothing', async () => {
      const username = unique('dup');
      await makeUser(admin, { username, role: 'viewer' });
      const dup = await admin.post('/access/users/', { username, role: 'admin' });
      assert.equal(dup.status, 409, dup.text);
      assert.match(dup.body.detail, new RegExp(username));
      const count = await api.mongo.db!.collection('access_users').countDocuments();
      for (const body of [
        { username: unique('norole') },
        { username: unique('badrole'), role: 'root' },
        { username: 'has spaces', role: 'viewer' },
        { username: '', role: 'viewer' },
        { username: unique('short'), role: 'viewer', password: 'short' },
        { username: unique('bademail'), role: 'viewer', email: 'not an e-mail' },
        // Only the api hashes passwords, and a new user is never made disabled or an OpenID user by a client.
        { username: unique('hash'), role: 'viewer', password_hash: 'scrypt$1$1$1$AAAA$AAAA' },
        { username: unique('disabled'), role: 'viewer', disabled: true },
        { username: unique('oidc'), role: 'viewer', oidc_subject: 'issuer|sub' },
      ]) {
        const res = await admin.post('/access/users/', body);
        assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.status} ${res.text}`);
      }
      assert.equal(await api.mongo.db!.collection('access_users').countDocuments(), count, 'no user stored');
    });

    it('updates only the fields sent; null clears; a taken username is 409, an unknown user 404, a bad body 422', async () => {
      const user = await makeUser(admin, { username: unique('upd'), role: 'viewer' });
      const taken = await makeUser(admin, { username: unique('taken'), role: 'viewer' });
      const put = (id: string, body: unknown) => admin.put(`/access/users/${id}/`, body as Record<string, unknown>);
      const changed = await put(user.id, { email: 'u@example.test', display_name: 'U', role: 'operator' });
      assert.equal(changed.status, 200, changed.text);
      assert.deepEqual(
        [changed.body.username, changed.body.email, changed.body.display_name, changed.body.role],
        [user.username, 'u@example.test', 'U', 'operator'],
      );
      const cleared = await put(user.id, { email: null });
      assert.deepEqual([cleared.body.email, cleared.body.display_name], [null, 'U']);
      assert.equal((await put(user.id, { username: taken.username })).status, 409);
      assert.equal((await put('UA999999', { role: 'admin' })).status, 404);
      for (const body of [{ role: 'root' }, { disabled: 'yes' }, { password: 'short' }, { password_hash: 'x' }]) {
        const res = await put(user.id, body);
        assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      }
      const now = await admin.get(`/access/users/${user.id}/`);
      assert.deepEqual(
        [now.body.username, now.body.role],
        [user.username, 'operator'],
        'the refused changes did nothing',
      );
    });

    it('a password signs its user in; a new one ends the sessions of the old, which then no longer signs in', async () => {
      const user = await makeUser(admin, { username: unique('pw'), role: 'viewer', password: PASSWORD });
      const none = await makeUser(admin, { username: unique('nopw'), role: 'viewer' });
      assert.equal((await signIn(none.username, PASSWORD)).status, 401, 'a user without a password cannot');
      assert.equal((await signIn(user.username, `${PASSWORD}x`)).status, 401, 'a wrong password cannot');
      const { status, cookie } = await signIn(user.username, PASSWORD);
      assert.equal(status, 303);
      const inSession = client(api.baseUrl, { cookie });
      assert.equal((await inSession.get('/access/me/')).body.username, user.username);
      const newPassword = 'another password entirely';
      assert.equal((await admin.put(`/access/users/${user.id}/`, { password: newPassword })).status, 200);
      assert.equal((await inSession.get('/access/me/')).status, 401, 'the old session has ended');
      assert.equal((await signIn(user.username, PASSWORD)).status, 401, 'the old password no longer signs in');
      assert.equal((await signIn(user.username, newPassword)).status, 303, 'the new one does');
      const cleared = await admin.put(`/access/users/${user.id}/`, { password: null });
      assert.equal(cleared.body.has_password, false);
      assert.equal((await signIn(user.username, newPassword)).status, 401, 'no password, no sign-in');
    });

    it('deletes a user (204) with their keys; a second delete is 404', async () => {
      const { user, key } = await userWithKey(admin, unique('del'), 'builder');
      assert.equal((await admin.delete(`/access/users/${user.id}/`)).status, 204);
      assert.equal((await admin.get(`/access/users/${user.id}/`)).status, 404);
      assert.equal((await admin.delete(`/access/users/${user.id}/`)).status, 404);
      assert.equal(await api.mongo.db!.collection('access_keys').countDocuments({ _id: key.id as never }), 0);
    });
  });

  describe('keys', () => {
    it('answers a key once (spur_…) and stores only its SHA-256: the key is nowhere in the database', async () => {
      const { user, key } = await userWithKey(admin, unique('keyed'), 'operator');
      assert.match(key.key, /^spur_[A-Za-z0-9_-]{43}$/);
      assert.equal(key.user_id, user.id);
      const stored = await api.mongo.db!.collection('access_keys').findOne({ _id: key.id as never });
      assert.equal(stored?.digest, createHash('sha256').update(key.key).digest('hex'));
      const text = await databaseText(api);
      assert.ok(!text.includes(key.key), 'the key is not stored');
      assert.ok(!text.includes(key.key.slice(5)), 'nor its random part');
      for (const list of [
        await admin.get('/access/keys/'),
        await client(api.baseUrl, bearer(key.key)).get('/access/keys/'),
      ])
        assert.ok(
          !list.text.includes(key.key) && !list.text.includes('"key"'),
          `never a key in a listing: ${list.text}`,
        );
    });

    it('lists your own keys; an admin sees every key', async () => {
      const alice = await userWithKey(admin, unique('alice'), 'builder');
      const aliceSecond = await makeKey(client(api.baseUrl, bearer(alice.key.key)), { name: 'second' });
      const bob = await userWithKey(admin, unique('bob'), 'viewer');
      const mine = await client(api.baseUrl, bearer(alice.key.key)).get('/access/keys/');
      assert.equal(mine.status, 200);
      assert.deepEqual(
        (mine.body as { id: string }[]).map((k) => k.id),
        [alice.key.id, aliceSecond.id],
      );
      const all = ((await admin.get('/access/keys/')).body as { id: string }[]).map((k) => k.id);
      for (const id of [alice.key.id, aliceSecond.id, bob.key.id]) assert.ok(all.includes(id), `${id} in ${all}`);
      const bobs = ((await client(api.baseUrl, bearer(bob.key.key)).get('/access/keys/')).body as { id: string }[]).map(
        (k) => k.id,
      );
      assert.deepEqual(bobs, [bob.key.id]);
    });

    it("a non-admin's DELETE of another user's key is 404 and the key still works; their own is revoked (204)", async () => {
      const alice = await userWithKey(admin, unique('alice'), 'builder');
      const bob = await userWithKey(admin, unique('bob'), 'builder');
      const asAlice = client(api.baseUrl, bearer(alice.key.key));
      const theirs = await asAlice.delete(`/access/keys/${bob.key.id}/`);
      assert.equal(theirs.status, 404, theirs.text);
      assert.equal((await asAlice.delete('/access/keys/K999999/')).status, 404, 'the same answer as no such key');
      assert.equal((await client(api.baseUrl, bearer(bob.key.key)).get('/wf/')).status, 200, "Bob's key works");
      const own = await makeKey(asAlice, { name: 'spare' });
      assert.equal((await asAlice.delete(`/access/keys/${own.id}/`)).status, 204);
      assert.equal((await client(api.baseUrl, bearer(own.key)).get('/wf/')).status, 401);
      assert.equal((await admin.delete(`/access/keys/${bob.key.id}/`)).status, 204, 'an admin revokes any key');
    });

    it('refuses keys that cannot be: no user for a configured key (422), an unknown or disabled user, a past expiry, a role above the user', async () => {
      const user = await makeUser(admin, { username: unique('k'), role: 'operator' });
      const cases: [unknown, number][] = [
        [{ name: 'no user' }, 422],
        [{ name: 'unknown user', user_id: 'UA999999' }, 404],
        [{ name: 'past', user_id: user.id, expires_at: new Date(Date.now() - 60_000).toISOString() }, 422],
        [{ name: 'above the user', user_id: user.id, role: 'builder' }, 400],
        [{ name: '', user_id: user.id }, 422],
        [{ name: 'bad role', user_id: user.id, role: 'root' }, 422],
      ];
      const count = await api.mongo.db!.collection('access_keys').countDocuments();
      for (const [body, status] of cases) {
        const res = await admin.post('/access/keys/', body as Record<string, unknown>);
        assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
      }
      assert.equal((await admin.put(`/access/users/${user.id}/`, { disabled: true })).status, 200);
      assert.equal((await admin.post('/access/keys/', { name: 'disabled', user_id: user.id })).status, 409);
      assert.equal(await api.mongo.db!.collection('access_keys').countDocuments(), count, 'no key stored');
    });

    it('records when a key was last used and its user last seen', async () => {
      const { user, key } = await userWithKey(admin, unique('used'), 'viewer');
      const listed = async () =>
        ((await admin.get('/access/keys/')).body as { id: string; last_used_at: string | null }[]).find(
          (k) => k.id === key.id,
        );
      assert.equal((await listed())?.last_used_at, null, 'never used yet');
      assert.equal((await admin.get(`/access/users/${user.id}/`)).body.last_seen_at, null);
      const before = Date.now();
      assert.equal((await client(api.baseUrl, bearer(key.key)).get('/wf/')).status, 200);
      const after = Date.now();
      const usedAt = Date.parse(await eventually('last_used_at set', async () => (await listed())?.last_used_at));
      assert.ok(usedAt >= before - 5 && usedAt <= after + 5, `${new Date(usedAt).toISOString()} within the request`);
      const seenAt = Date.parse(
        await eventually(
          'last_seen_at set',
          async () => (await admin.get(`/access/users/${user.id}/`)).body.last_seen_at as string | null,
        ),
      );
      assert.ok(seenAt >= before - 5 && seenAt <= after + 5);
    });
  });

  describe('/access/me/', () => {
    it("a user's key: the user, the key's role and its id, and the role's permissions", async () => {
      const { user, key } = await userWithKey(admin, unique('me'), 'approver');
      const me = await client(api.baseUrl, bearer(key.key)).get('/access/me/');
      assert.equal(me.status, 200, me.text);
      assert.deepEqual(
        { ...me.body, user: me.body.user.id },
        {
          user: user.id,
          username: user.username,
          role: 'approver',
          via: 'key',
          key_id: key.id,
          workspace_id: 'default',
          workspaces: [{ id: 'default', name: 'default', role: 'approver' }],
          permissions: ['read', 'self', 'pause.decide'],
        },
      );
    });

    it("a user's session signed in with a password: via session, no key", async () => {
      const user = await makeUser(admin, { username: unique('sess'), role: 'builder', password: PASSWORD });
      const { cookie } = await signIn(user.username, PASSWORD);
      const me = await client(api.baseUrl, { cookie }).get('/access/me/');
      assert.equal(me.status, 200, me.text);
      assert.deepEqual(
        [me.body.user.id, me.body.username, me.body.role, me.body.via, me.body.key_id],
        [user.id, user.username, 'builder', 'session', null],
      );
    });

    it('a configured key and its session: the operator, an admin with no user', async () => {
      const me = await admin.get('/access/me/');
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.user, null);
      assert.equal(me.body.role, 'admin');
      assert.equal(me.body.via, 'key');
      assert.match(me.body.key_id, /^config:[0-9a-f]{12}$/);
      assert.ok(!me.text.includes(ADMIN_KEY), 'never the key itself');
      assert.ok(me.body.permissions.includes('users.manage'));
      const login = await fetch(`${origin}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams({ api_key: ADMIN_KEY, next: '/' }).toString(),
      });
      assert.equal(login.status, 303);
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      const inSession = await client(api.baseUrl, { cookie }).get('/access/me/');
      assert.deepEqual(
        [inSession.body.user, inSession.body.role, inSession.body.via, inSession.body.key_id],
        [null, 'admin', 'session', null],
      );
    });

    it('a keyless loopback api: local, an admin', async () => {
      await withApi({ SPUR_WEB_UI: 'false' }, async (open) => {
        const me = await client(open.baseUrl).get('/access/me/');
        assert.equal(me.status, 200, me.text);
        assert.deepEqual(
          { ...me.body, permissions: undefined },
          {
            user: null,
            username: 'local',
            role: 'admin',
            via: 'local',
            key_id: null,
            workspace_id: 'default',
            workspaces: [{ id: 'default', name: 'default', role: 'admin' }],
            permissions: undefined,
          },
        );
        assert.ok(me.body.permissions.includes('users.manage'));
      });
    });

    it('no key: 401', async () => {
      assert.equal((await client(api.baseUrl).get('/access/me/')).status, 401);
      assert.equal((await client(api.baseUrl, bearer('spur_not-a-key')).get('/access/me/')).status, 401);
    });
  });
});
