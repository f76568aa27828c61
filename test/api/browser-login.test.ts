import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import { tinyWebUiExport as tinyExport } from '../support/browser-login';

const KEY = 'spur_browser-login-test-key';
const OTHER_KEY = 'spur_another-key';

describe('api: browser login with API keys', function () {
  this.timeout(60_000);
  let api: TestApi;
  let origin: string;

  const send = (p: string, init: RequestInit = {}) => fetch(`${origin}${p}`, { redirect: 'manual', ...init });
  async function login(key: string, next = '/dashboard', headers: Record<string, string> = { origin }) {
    return send('/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ api_key: key, next }).toString(),
    });
  }
  const cookieOf = (res: Response) => (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';

  before(async () => {
    api = await startApi({
      SPUR_API_KEY_HASHES: `${hashApiKey(KEY)},${hashApiKey(OTHER_KEY)}`,
      SPUR_WEB_UI_DIR: tinyExport(),
      SPUR_SESSION_HOURS: '1',
    });
    origin = api.baseUrl.replace(/\/api$/, '');
  });
  after(async () => api?.close());

  it('sends a browser without a session to the login page; assets stay open', async () => {
    const page = await send('/dashboard');
    assert.equal(page.status, 302);
    assert.equal(page.headers.get('location'), '/login?next=%2Fdashboard');
    const form = await send('/login?next=%2Fdashboard');
    assert.equal(form.status, 200);
    const html = await form.text();
    assert.match(html, /<form method="post" action="\/login"[^>]*>[\s\S]*name="username"[\s\S]*name="password"/);
    assert.match(html, /<form method="post" action="\/login"[^>]*>[\s\S]*name="api_key"/);
    assert.equal((await send('/_next/static/app.js')).status, 200);
    assert.equal((await send('/api/wf/')).status, 401);
  });

  it('a valid key sets an HttpOnly, SameSite=Strict, expiring cookie that works like a key', async () => {
    const res = await login(KEY);
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/dashboard');
    const setCookie = res.headers.get('set-cookie') ?? '';
    assert.match(
      setCookie,
      /^spur_session=[^;]+; Path=\/; Max-Age=3600; HttpOnly; SameSite=Strict$/,
      'no Secure over plain HTTP',
    );
    assert.doesNotMatch(setCookie, new RegExp(KEY), 'the cookie is not the key');
    const cookie = cookieOf(res);
    assert.equal((await send('/dashboard', { headers: { cookie } })).status, 200);
    assert.equal((await send('/api/wf/', { headers: { cookie } })).status, 200);
    const created = await send('/api/wf/', {
      method: 'POST',
      headers: { cookie, origin, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'from the browser' }),
    });
    assert.equal(created.status, 200, await created.text());
  });

  it('over TLS (a proxy saying so) the cookie is __Host- prefixed and Secure', async () => {
    const res = await login(KEY, '/', { origin: origin.replace('http:', 'https:'), 'x-forwarded-proto': 'https' });
    assert.equal(res.status, 303);
    assert.match(
      res.headers.get('set-cookie') ?? '',
      /^__Host-spur_session=[^;]+; Path=\/; Max-Age=3600; HttpOnly; SameSite=Strict; Secure$/,
    );
  });

  it('refuses a state change by cookie from another origin or without one (CSRF); a header key needs no Origin', async () => {
    const cookie = cookieOf(await login(KEY));
    for (const headers of [{ origin: 'http://evil.example' }, {}] as Record<string, string>[]) {
      const res = await send('/api/wf/', {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ name: 'csrf' }),
      });
      assert.equal(res.status, 403);
    }
    const byKey = await send('/api/wf/', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'by key' }),
    });
    assert.equal(byKey.status, 200);
    const crossRead = await send('/api/wf/', { headers: { cookie, origin: 'http://localhost:3000' } });
    assert.equal(crossRead.status, 403, 'a same-site neighbour (another local app) cannot read with the cookie');
    const crossLogin = await login(KEY, '/', { origin: 'http://evil.example' });
    assert.equal(crossLogin.status, 403, 'login CSRF');
  });

  it('lets nothing else in: a wrong key, a forged or tampered cookie', async () => {
    const wrong = await login('not-a-key');
    assert.equal(wrong.status, 401);
    assert.match(await wrong.text(), /not valid/);
    assert.equal(wrong.headers.get('set-cookie'), null);
    const good = cookieOf(await login(KEY)).replace('spur_session=', '');
    const forged = [
      `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`, // one character off: no such session
      'A'.repeat(43),
      `${Date.now() + 3_600_000}.${'0'.repeat(16)}.${'A'.repeat(43)}`, // a signed-cookie shape
      'garbage',
    ];
    for (const value of forged) {
      assert.equal((await send('/api/wf/', { headers: { cookie: `spur_session=${value}` } })).status, 401, value);
      assert.equal((await send('/dashboard', { headers: { cookie: `spur_session=${value}` } })).status, 302, value);
    }
    assert.equal((await send('/api/wf/', { headers: { cookie: `spur_session=${good}` } })).status, 200);
  });

  it('never redirects off the server after login, and logout ends the session', async () => {
    for (const next of ['//evil.example/x', 'https://evil.example', '/\\evil.example']) {
      assert.equal((await login(KEY, next)).headers.get('location'), '/', next);
    }
    const cookie = cookieOf(await login(KEY));
    assert.equal((await send('/api/wf/', { headers: { cookie } })).status, 200, 'the session works before the logout');
    const out = await send('/logout', { method: 'POST', headers: { cookie, origin } });
    assert.equal(out.status, 303);
    assert.match(out.headers.get('set-cookie') ?? '', /^spur_session=; Path=\/; Max-Age=0/);
    assert.equal((await send('/api/wf/', { headers: { cookie } })).status, 401, 'the cookie, kept, no longer works');
  });

  it('a session ends when its key is removed from the configuration', async () => {
    const cookie = cookieOf(await login(OTHER_KEY));
    const fewer = await startApi({ ...api.env, SPUR_API_KEY_HASHES: hashApiKey(KEY), SPUR_WEB_UI_DIR: tinyExport() });
    try {
      assert.equal((await fetch(`${fewer.baseUrl}/wf/`, { headers: { cookie } })).status, 401);
    } finally {
      await fewer.close();
    }
  });

  it('without keys there is no login: /login sends the browser on', async () => {
    const open = await startApi({ SPUR_WEB_UI_DIR: tinyExport() });
    try {
      const res = await fetch(`${open.baseUrl.replace(/\/api$/, '')}/login?next=%2Fdashboard`, { redirect: 'manual' });
      assert.equal(res.status, 302);
      assert.equal(res.headers.get('location'), '/dashboard');
      assert.equal((await fetch(`${open.baseUrl.replace(/\/api$/, '')}/dashboard`)).status, 200);
    } finally {
      await open.close();
    }
  });
});
