import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { trusted } from 'mongoose';
import { hashApiKey } from '../../src/http/api-keys';
import { startApi, type TestApi } from '../support/api';
import { postLogin, sessionCookieOf } from '../support/browser-login';
import { rawClient, type RawClient, type RawReply } from '../support/raw-http';
import { stack } from '../support/stack';
import { MARK, databaseDigest, multipartBody } from './attack-corpus';

const KEY = 'spur_browser-attacks-key-0123456789';
const EVIL = 'https://evil.example';

/** A web UI export with one page and one asset, so pages and files are served as with PySpur's. */
function uiExport(): string {
  const dir = mkdtempSync(path.join(stack.tmpDir, 'web-ui-attacks-'));
  mkdirSync(path.join(dir, '_next/static'), { recursive: true });
  for (const [file, text] of [
    ['index.html', '<html>home</html>'],
    ['dashboard.html', '<html>dashboard</html>'],
    ['_next/static/app.js', 'x'],
  ])
    writeFileSync(path.join(dir, file), text);
  return dir;
}

interface Server {
  api: TestApi;
  raw: RawClient;
  /** `http://127.0.0.1:<port>`: the origin a page of this server has. */
  origin: string;
  /** `127.0.0.1:<port>` */
  host: string;
}

async function serve(env: Record<string, string>): Promise<Server> {
  const api = await startApi(env);
  const origin = api.baseUrl.replace(/\/api$/, '');
  return { api, raw: rawClient(origin), origin, host: new URL(origin).host };
}

/** Workflows whose name carries the marker: what a successful attack below would have created. */
const plantedWorkflows = (s: Server) => s.api.models.Workflow.countDocuments({ name: trusted({ $regex: MARK }) });

/** What the server answers a request written byte for byte (no Host at all, which no client library sends). */
function rawExchange(origin: string, request: string): Promise<string> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.end(request));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

const text = (reply: RawReply) => reply.body.toString('utf8');

describe('security: a browser on another site cannot drive the api', function () {
  this.timeout(120_000);
  let open: Server;
  let keyed: Server;
  let configured: Server;
  before(async () => {
    [open, keyed, configured] = await Promise.all([
      serve({ SPUR_WEB_UI_DIR: uiExport() }),
      serve({ SPUR_API_KEY_HASHES: hashApiKey(KEY), SPUR_WEB_UI_DIR: uiExport() }),
      serve({
        SPUR_API_KEY_HASHES: hashApiKey(KEY),
        SPUR_WEB_UI: 'false',
        SPUR_CORS_ORIGINS: 'https://app.example.com',
        SPUR_ALLOWED_HOSTS: 'spur.example.com',
      }),
    ]);
  });
  after(async () => {
    for (const s of [open, keyed, configured]) {
      s?.raw.close();
      await s?.api.close();
    }
  });

  describe('without keys', () => {
    it('refuses JSON sent as text/plain, a form, multipart or with no type (415) — the bodies a page may send cross-site without a preflight — and creates nothing', async () => {
      const json = JSON.stringify({ name: `${MARK}-plain` });
      const form = await multipartBody({ name: `${MARK}-multipart` });
      const attacks: { type?: string; body: string | Buffer; path?: string }[] = [
        { type: 'text/plain;charset=UTF-8', body: json },
        {
          type: 'text/plain',
          body: JSON.stringify({ name: 'OPENAI_API_KEY', value: `${MARK}-planted` }),
          path: '/api/env-mgmt/',
        },
        // The classic trick: a form field whose name is JSON text and whose value closes it.
        { type: 'application/x-www-form-urlencoded', body: `{"name":"${MARK}-form","x":"=1"}` },
        { type: form.type, body: form.body },
        { body: json },
      ];
      const before = await databaseDigest(open.api);
      for (const attack of attacks) {
        // As a page sends them: `fetch(…, {mode: 'no-cors'})` or a form posts with its Origin; also without one.
        for (const origin of [undefined, EVIL]) {
          const headers: Record<string, string> = {
            ...(attack.type ? { 'content-type': attack.type } : {}),
            ...(origin ? { origin, 'sec-fetch-site': 'cross-site' } : {}),
          };
          const reply = await open.raw.request({
            method: 'POST',
            path: attack.path ?? '/api/wf/',
            headers,
            body: attack.body,
          });
          assert.equal(
            reply.status,
            origin ? 403 : 415,
            `${attack.type ?? 'no type'} from ${origin ?? 'no origin'}: ${text(reply)}`,
          );
          if (!origin)
            assert.match(JSON.parse(text(reply)).detail, /Unsupported Content-Type .* must be application\/json/);
        }
      }
      assert.equal(await databaseDigest(open.api), before, 'nothing was created or changed');
      assert.equal(await open.api.models.EnvVar.countDocuments(), 0, 'no env var was set');
      // The control: the same body as JSON from the server's own page is taken.
      const own = await open.raw.request({
        method: 'POST',
        path: '/api/wf/',
        headers: { 'content-type': 'application/json', origin: open.origin },
        body: json,
      });
      assert.equal(own.status, 200, text(own));
      assert.equal(await plantedWorkflows(open), 1);
    });

    it('DNS rebinding: a request under another host name is refused (421) and reads or changes nothing; loopback names are served', async () => {
      await open.raw.request({
        method: 'POST',
        path: '/api/env-mgmt/',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'OPENAI_API_KEY', value: `sk-${MARK}` }),
      });
      const before = await databaseDigest(open.api);
      const port = open.host.split(':')[1] ?? '';
      for (const host of [
        `evil.example:${port}`,
        'evil.example',
        `127.0.0.1.nip.io:${port}`,
        `localhost.evil.example:${port}`,
        `0.0.0.0:${port}`,
        `[::ffff:7f00:1]:${port}`,
      ]) {
        // The rebound page is same-origin with itself: its Origin matches its Host.
        const headers = { host, origin: `http://${host}` };
        for (const p of ['/api/env-mgmt/', '/api/wf/', '/api/env-mgmt/OPENAI_API_KEY']) {
          const read = await open.raw.request({ method: 'GET', path: p, headers });
          assert.equal(read.status, 421, `${host} GET ${p}`);
          assert.ok(!text(read).includes(MARK), `${host} GET ${p} leaked ${text(read).slice(0, 200)}`);
        }
        const write = await open.raw.request({
          method: 'POST',
          path: '/api/wf/',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `${MARK}-rebound` }),
        });
        assert.equal(write.status, 421, `${host} POST`);
      }
      // HTTP/1.0 may leave Host out (1.1 may not: Node answers 400): no name is no loopback name.
      assert.match(await rawExchange(open.origin, 'GET /api/env-mgmt/ HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 421 /);
      assert.equal(await databaseDigest(open.api), before, 'nothing was created or changed');
      for (const host of [open.host, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, '127.0.0.1']) {
        assert.equal(
          (await open.raw.request({ method: 'GET', path: '/api/wf/', headers: { host } })).status,
          200,
          host,
        );
      }
    });

    it('refuses a state change from a foreign Origin (403) and changes nothing; its own page and local dev origins pass', async () => {
      const create = (origin: string, name: string) =>
        open.raw.request({
          method: 'POST',
          path: '/api/wf/',
          headers: { origin, 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
        });
      const before = await databaseDigest(open.api);
      for (const origin of [
        EVIL,
        'null',
        `http://evil.example:${open.host.split(':')[1]}`,
        'http://127.0.0.1.evil.example',
      ]) {
        assert.equal((await create(origin, `${MARK}-foreign`)).status, 403, origin);
        const del = await open.raw.request({
          method: 'DELETE',
          path: '/api/env-mgmt/OPENAI_API_KEY',
          headers: { origin },
        });
        assert.equal(del.status, 403, `DELETE from ${origin}`);
      }
      assert.equal(await databaseDigest(open.api), before, 'nothing was created, changed or deleted');
      const count = await plantedWorkflows(open);
      assert.equal((await create(open.origin, `${MARK}-own`)).status, 200);
      assert.equal(
        (await create('http://localhost:3000', `${MARK}-dev`)).status,
        200,
        'a PySpur frontend on another local port',
      );
      assert.equal(await plantedWorkflows(open), count + 2);
    });

    it("keeps the UI's own requests working: a multipart upload from its page", async () => {
      const wf = JSON.parse(
        text(
          await open.raw.request({
            method: 'POST',
            path: '/api/wf/',
            headers: { 'content-type': 'application/json' },
            body: '{"name":"upload target"}',
          }),
        ),
      );
      const form = new FormData();
      form.append('workflow_id', wf.id);
      form.append('node_id', 'input_node');
      form.append('files', new Blob(['a,b\n1,2\n']), 'rows.csv');
      const res = await fetch(`${open.origin}/api/wf/upload_test_files/`, {
        method: 'POST',
        body: form,
        headers: { origin: open.origin },
      });
      assert.equal(res.status, 200, await res.text());
      assert.equal(await open.api.models.conn.db!.collection('test_files.files').countDocuments(), 1);
    });
  });

  describe('with keys', () => {
    it('serves any Host to key holders (behind proxies), none without a key; SPUR_ALLOWED_HOSTS limits the names', async () => {
      const key = { authorization: `Bearer ${KEY}` };
      assert.equal(
        (await keyed.raw.request({ method: 'GET', path: '/api/wf/', headers: { ...key, host: 'spur.internal:443' } }))
          .status,
        200,
      );
      assert.equal(
        (await keyed.raw.request({ method: 'GET', path: '/api/wf/', headers: { host: 'spur.internal:443' } })).status,
        401,
      );
      assert.equal(
        (await configured.raw.request({ method: 'GET', path: '/api/wf/', headers: { ...key, host: 'evil.example' } }))
          .status,
        421,
      );
      for (const host of ['spur.example.com', 'SPUR.example.com:8443', configured.host]) {
        assert.equal(
          (await configured.raw.request({ method: 'GET', path: '/api/wf/', headers: { ...key, host } })).status,
          200,
          host,
        );
      }
    });

    it('refuses a state change from a foreign Origin even with a valid key (403), and changes nothing; a configured origin passes', async () => {
      const create = (s: Server, origin: string) =>
        s.raw.request({
          method: 'POST',
          path: '/api/wf/',
          headers: { origin, authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `${MARK}-keyed` }),
        });
      const before = await databaseDigest(keyed.api);
      for (const origin of [EVIL, 'null', 'http://localhost:3000'])
        assert.equal((await create(keyed, origin)).status, 403, origin);
      assert.equal(await databaseDigest(keyed.api), before, 'nothing was created');
      assert.equal((await create(configured, 'https://app.example.com')).status, 200);
      assert.equal(await plantedWorkflows(configured), 1);
    });

    it('a logged-in browser session (its cookie sent along) drives nothing cross-site: text/plain, multipart to a JSON route, a foreign Origin are refused (403/415) and change nothing', async () => {
      const login = await postLogin(keyed.origin, KEY);
      assert.equal(login.status, 303, login.body);
      const cookie = sessionCookieOf(login);
      assert.match(cookie, /^spur_session=/);
      const json = JSON.stringify({ name: `${MARK}-session` });
      const form = await multipartBody({ name: `${MARK}-session-multipart` });
      const post = (headers: Record<string, string>, body: string | Buffer, path = '/api/wf/') =>
        keyed.raw.request({ method: 'POST', path, headers: { cookie, ...headers }, body });
      const before = await databaseDigest(keyed.api);
      const attacks: [string, Record<string, string>, string | Buffer, number][] = [
        // A page of another site: a simple request (no preflight) carries its Origin, or none (older browsers, a redirect).
        ['text/plain from a foreign page', { 'content-type': 'text/plain;charset=UTF-8', origin: EVIL }, json, 403],
        ['text/plain without an Origin', { 'content-type': 'text/plain' }, json, 403],
        ['multipart from a foreign page', { 'content-type': form.type, origin: EVIL }, form.body, 403],
        ['multipart without an Origin', { 'content-type': form.type }, form.body, 403],
        ['JSON from a foreign page', { 'content-type': 'application/json', origin: EVIL }, json, 403],
        ['JSON from a null origin', { 'content-type': 'application/json', origin: 'null' }, json, 403],
        // Its own origin, but a body a page may send without a preflight: still not read as JSON.
        ['text/plain from its own page', { 'content-type': 'text/plain', origin: keyed.origin }, json, 415],
        ['multipart from its own page', { 'content-type': form.type, origin: keyed.origin }, form.body, 415],
      ];
      for (const [what, headers, body, status] of attacks) {
        const reply = await post(headers, body);
        assert.equal(reply.status, status, `${what}: ${text(reply)}`);
        const env = await post(
          headers,
          typeof body === 'string' ? JSON.stringify({ name: 'OPENAI_API_KEY', value: `${MARK}-planted` }) : body,
          '/api/env-mgmt/',
        );
        assert.equal(env.status, status, `${what} to env-mgmt: ${text(env)}`);
      }
      assert.equal(await databaseDigest(keyed.api), before, 'nothing was created or changed');
      // The control: the cookie is a live session, and JSON from its own page is taken.
      const planted = await plantedWorkflows(keyed);
      const own = await post({ 'content-type': 'application/json', origin: keyed.origin }, json);
      assert.equal(own.status, 200, text(own));
      assert.equal(await plantedWorkflows(keyed), planted + 1);
    });

    it('gives CORS headers to configured origins only: none by default (not even local ones)', async () => {
      const preflight = (s: Server, origin: string) =>
        s.raw.request({
          method: 'OPTIONS',
          path: '/api/wf/',
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type,authorization',
          },
        });
      assert.equal((await preflight(keyed, 'http://localhost:3000')).headers['access-control-allow-origin'], undefined);
      assert.equal((await preflight(keyed, EVIL)).headers['access-control-allow-origin'], undefined);
      assert.equal(
        (await preflight(configured, 'https://app.example.com')).headers['access-control-allow-origin'],
        'https://app.example.com',
      );
      assert.equal((await preflight(configured, EVIL)).headers['access-control-allow-origin'], undefined);
      assert.equal(
        (await preflight(open, 'http://localhost:3000')).headers['access-control-allow-origin'],
        'http://localhost:3000',
        'without keys: local dev origins',
      );
    });

    it('answers the health status to anyone, its details only to a key holder', async () => {
      const anonymous = await keyed.raw.request({ method: 'GET', path: '/api/health/' });
      assert.ok([200, 503].includes(anonymous.status));
      assert.deepEqual(Object.keys(JSON.parse(text(anonymous))), ['status']);
      const detailed = JSON.parse(
        text(await keyed.raw.request({ method: 'GET', path: '/api/health/', headers: { 'x-api-key': KEY } })),
      );
      assert.deepEqual(Object.keys(detailed.checks).sort(), ['audit_trail', 'mongodb', 'temporal']);
    });

    it('sends a page request without a session to /login, API paths in other letters too; files stay open', async () => {
      for (const p of ['/dashboard', '/', '/API/wf/', '/Api/env-mgmt/']) {
        const res = await keyed.raw.request({ method: 'GET', path: p });
        assert.equal(res.status, 302, p);
        assert.equal(res.headers.location, `/login?next=${encodeURIComponent(p)}`);
      }
      assert.equal((await keyed.raw.request({ method: 'GET', path: '/_next/static/app.js' })).status, 200);
      assert.equal(
        (
          await keyed.raw.request({
            method: 'POST',
            path: '/dashboard',
            headers: { 'content-type': 'application/json' },
            body: '{}',
          })
        ).status,
        401,
      );
    });

    it('takes the login form only as a form (415 otherwise)', async () => {
      const login = (type: string, body: string) =>
        keyed.raw.request({
          method: 'POST',
          path: '/login',
          headers: { 'content-type': type, origin: keyed.origin },
          body,
        });
      assert.equal((await login('application/json', JSON.stringify({ api_key: KEY }))).status, 415);
      assert.equal((await login('text/plain', `api_key=${KEY}`)).status, 415);
      const form = await login(
        'application/x-www-form-urlencoded',
        new URLSearchParams({ api_key: KEY, next: '/' }).toString(),
      );
      assert.equal(form.status, 303);
    });
  });

  describe('security headers', () => {
    const expectSecurityHeaders = (reply: RawReply, what: string) => {
      assert.equal(reply.headers['x-content-type-options'], 'nosniff', what);
      assert.equal(reply.headers['x-frame-options'], 'DENY', what);
      assert.match(String(reply.headers['content-security-policy']), /(^|;\s*)frame-ancestors 'none'(;|$)/, what);
      assert.equal(reply.headers['referrer-policy'], 'same-origin', what);
      assert.equal(reply.headers['strict-transport-security'], undefined, `${what}: no HSTS over plain HTTP`);
    };

    it('are on API answers, error answers, web UI pages and the login page', async () => {
      const plain = { 'content-type': 'text/plain' };
      const cases: [Server, string, string, number, Record<string, string>?][] = [
        [open, 'GET', '/api/wf/', 200],
        [open, 'GET', '/api/no/such/route', 404],
        [open, 'GET', '/api/wf/NOPE/', 404],
        [open, 'POST', '/api/wf/', 415, plain],
        [open, 'GET', '/api//wf/', 404],
        [open, 'GET', '/', 200],
        [open, 'GET', '/dashboard', 200],
        [open, 'GET', '/_next/static/app.js', 200],
        [keyed, 'GET', '/login', 200],
        [keyed, 'GET', '/api/wf/', 401],
        [keyed, 'GET', '/dashboard', 302],
        [keyed, 'GET', '/api/docs', 401],
        [keyed, 'POST', '/api/wf/', 403, { origin: EVIL }],
        [configured, 'GET', '/api/wf/', 421, { host: 'evil.example' }],
      ];
      for (const [s, method, p, status, headers = {}] of cases) {
        const reply = await s.raw.request({ method, path: p, headers, ...(method === 'POST' ? { body: 'x' } : {}) });
        assert.equal(reply.status, status, `${method} ${p}`);
        expectSecurityHeaders(reply, `${method} ${p} (${status})`);
      }
      const docs = await keyed.raw.request({ method: 'GET', path: '/api/docs', headers: { 'x-api-key': KEY } });
      assert.equal(docs.status, 200);
      expectSecurityHeaders(docs, 'the docs page');
    });

    it('add HSTS only when the request came over TLS (a proxy saying so)', async () => {
      const reply = await keyed.raw.request({
        method: 'GET',
        path: '/login',
        headers: { 'x-forwarded-proto': 'https' },
      });
      assert.match(String(reply.headers['strict-transport-security']), /^max-age=\d+/);
    });
  });
});
