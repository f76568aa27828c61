import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import { plainRequest, postLogin, sessionCookieOf, tinyWebUiExport } from '../support/browser-login';

const KEY = 'spur_sessions-test-key';
const OTHER_KEY = 'spur_sessions-other-key';

const originOf = (api: TestApi) => api.baseUrl.replace(/\/api$/, '');
const sessionCount = (api: TestApi) => api.mongo.collection('browser_sessions').countDocuments();

/** Starts apis that share one database and secret key (replicas); closes them all after the test. */
async function withApis(
  count: number,
  env: Record<string, string>,
  test: (apis: TestApi[]) => Promise<void>,
): Promise<void> {
  const first = await startApi(env);
  const apis = [first];
  try {
    for (let i = 1; i < count; i++) apis.push(await startApi({ ...first.env, SPUR_WEB_UI_DIR: tinyWebUiExport() }));
    await test(apis);
  } finally {
    // Each close drops the shared database: the order does not matter.
    for (const api of apis.reverse()) await api.close();
  }
}

describe('security: browser sessions live on the server', function () {
  this.timeout(120_000);
  let api: TestApi;
  let origin: string;
  const keyEnv = () => ({
    SPUR_API_KEY_HASHES: `${hashApiKey(KEY)},${hashApiKey(OTHER_KEY)}`,
    SPUR_WEB_UI_DIR: tinyWebUiExport(),
  });
  const get = (path: string, cookie: string, headers: Record<string, string> = {}) =>
    plainRequest(origin, 'GET', path, { headers: { cookie, ...headers } });

  before(async () => {
    api = await startApi(keyEnv());
    origin = originOf(api);
  });
  after(async () => api?.close());

  it('logout ends the session: a copied cookie then gets 401 from the API, no state change, and pages go to /login; the database never holds the id', async () => {
    const login = await postLogin(origin, KEY);
    assert.equal(login.status, 303);
    const cookie = sessionCookieOf(login);
    assert.match(cookie, /^spur_session=[A-Za-z0-9_-]{43}$/, 'the cookie holds only a random session id');
    const copied = cookie;
    const stored = JSON.stringify(await api.mongo.collection('browser_sessions').find().toArray());
    assert.ok(!stored.includes(cookie.split('=')[1]!), 'the database holds a keyed digest of the id, not the id');
    assert.equal((await get('/api/wf/', cookie)).status, 200);
    assert.equal((await get('/dashboard', cookie)).status, 200);
    const before = await sessionCount(api);

    const out = await plainRequest(origin, 'POST', '/logout', { headers: { cookie, origin } });
    assert.equal(out.status, 303);
    assert.equal(await sessionCount(api), before - 1, 'the stored session is gone');

    assert.equal((await get('/api/wf/', copied)).status, 401);
    const page = await get('/dashboard', copied);
    assert.equal(page.status, 302);
    assert.equal(page.headers.location, '/login?next=%2Fdashboard');
    const create = await plainRequest(origin, 'POST', '/api/wf/', {
      headers: { cookie: copied, origin, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'after logout' }),
    });
    assert.equal(create.status, 401);
    const listed = await plainRequest(origin, 'GET', '/api/wf/', { headers: { authorization: `Bearer ${KEY}` } });
    assert.ok(!listed.body.includes('after logout'), 'no workflow was created with the ended session');
  });

  it('a new login from a browser with a session replaces it: the old cookie stops working', async () => {
    const old = sessionCookieOf(await postLogin(origin, KEY));
    const again = await postLogin(origin, KEY, { headers: { cookie: old } });
    assert.equal(again.status, 303);
    assert.equal((await get('/api/wf/', old)).status, 401);
    assert.equal((await get('/api/wf/', sessionCookieOf(again))).status, 200);
  });

  it('a session made on one api works on a second sharing the database; logout on the second ends it on the first', async () => {
    await withApis(2, keyEnv(), async ([one, two]) => {
      const cookie = sessionCookieOf(await postLogin(originOf(one!), KEY));
      assert.equal((await plainRequest(originOf(two!), 'GET', '/api/wf/', { headers: { cookie } })).status, 200);
      assert.equal(
        (await plainRequest(originOf(two!), 'POST', '/logout', { headers: { cookie, origin: originOf(two!) } })).status,
        303,
      );
      assert.equal((await plainRequest(originOf(one!), 'GET', '/api/wf/', { headers: { cookie } })).status, 401);
      assert.equal((await plainRequest(originOf(two!), 'GET', '/api/wf/', { headers: { cookie } })).status, 401);
    });
  });

  it('an api restarted without a key refuses that key’s sessions, and one with another secret key refuses all', async () => {
    await withApis(1, keyEnv(), async ([first]) => {
      const other = sessionCookieOf(await postLogin(originOf(first!), OTHER_KEY));
      const kept = sessionCookieOf(await postLogin(originOf(first!), KEY));
      const fewer = await startApi({
        ...first!.env,
        SPUR_API_KEY_HASHES: hashApiKey(KEY),
        SPUR_WEB_UI_DIR: tinyWebUiExport(),
      });
      const rekeyed = await startApi({
        ...first!.env,
        SPUR_SECRET_KEY: randomBytes(32).toString('base64'),
        SPUR_WEB_UI_DIR: tinyWebUiExport(),
      });
      try {
        assert.equal(
          (await plainRequest(originOf(fewer), 'GET', '/api/wf/', { headers: { cookie: other } })).status,
          401,
        );
        assert.equal(
          (await plainRequest(originOf(fewer), 'GET', '/dashboard', { headers: { cookie: other } })).status,
          302,
        );
        assert.equal(
          (await plainRequest(originOf(fewer), 'GET', '/api/wf/', { headers: { cookie: kept } })).status,
          200,
          'a configured key keeps its sessions',
        );
        assert.equal(
          (await plainRequest(originOf(rekeyed), 'GET', '/api/wf/', { headers: { cookie: kept } })).status,
          401,
          'sessions are bound to the secret key',
        );
      } finally {
        await rekeyed.close();
        await fewer.close();
      }
    });
  });

  it('refuses an expired session even while it is still stored (FerretDB keeps expired documents)', async () => {
    const cookie = sessionCookieOf(await postLogin(origin, KEY));
    assert.equal((await get('/api/wf/', cookie)).status, 200);
    const sessions = api.mongo.collection('browser_sessions');
    const before = await sessions.countDocuments();
    await sessions.updateMany({}, { $set: { expires_at: new Date(Date.now() - 1000) } });
    assert.equal((await get('/api/wf/', cookie)).status, 401);
    assert.equal(await sessions.countDocuments(), before - 1, 'the expired session read is removed');
  });

  it('over TLS the cookie is __Host-spur_session (Secure, Path=/, no Domain); the plain name is not read there', async () => {
    const tls = { 'x-forwarded-proto': 'https' };
    const httpsOrigin = origin.replace('http:', 'https:');
    const login = await postLogin(origin, KEY, { headers: { ...tls, origin: httpsOrigin } });
    assert.equal(login.status, 303);
    const setCookie = (login.headers['set-cookie'] ?? [])[0] ?? '';
    assert.match(
      setCookie,
      /^__Host-spur_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict; Secure$/,
    );
    const value = sessionCookieOf(login).split('=')[1]!;
    assert.equal((await get('/api/wf/', `__Host-spur_session=${value}`, tls)).status, 200);
    // A plain-named cookie can be planted over HTTP (or by a sibling host): a TLS request ignores it.
    const plain = sessionCookieOf(await postLogin(origin, KEY));
    assert.equal((await get('/api/wf/', plain, tls)).status, 401);
    assert.equal((await get('/api/wf/', `spur_session=${value}`, tls)).status, 401);
  });

  it('a client-set X-Forwarded-Proto cannot make the cookie less strict: any https in it counts', async () => {
    // A proxy that appends its https after what the client sent.
    const login = await postLogin(origin, KEY, {
      headers: { 'x-forwarded-proto': 'http, https', origin: origin.replace('http:', 'https:') },
    });
    assert.equal(login.status, 303);
    assert.match((login.headers['set-cookie'] ?? [])[0] ?? '', /^__Host-spur_session=.*; Secure$/);
  });
});
