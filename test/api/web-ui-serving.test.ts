import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';
import { rawClient } from '../support/raw-http';
import { stack } from '../support/stack';

/** A miniature Next.js static export with each kind of route the real one has. */
function fakeExport(): string {
  const dir = mkdtempSync(path.join(stack.tmpDir, 'web-ui-'));
  const files: Record<string, string> = {
    'index.html': '<html>home</html>',
    'dashboard.html': '<html>dashboard</html>',
    '404.html': '<html>not here</html>',
    'workflows/[id].html': '<html>editor</html>',
    'sessions/[userId].html': '<html>user sessions</html>',
    'sessions/[userId]/[sessionId].html': '<html>one session</html>',
    'rag/indices/new.html': '<html>new index</html>',
    'rag/indices/[id].html': '<html>an index</html>',
    '_next/static/chunks/app-1234.js': 'console.log(1)',
    '_next/static/css/app.css': 'body{}',
    'favicon.ico': 'ico',
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

describe('api: serving the web UI at /', function () {
  this.timeout(60_000);
  let api: TestApi;
  let site: ReturnType<typeof client>;
  before(async () => {
    api = await startApi({ SPUR_WEB_UI_DIR: fakeExport() });
    site = client(api.baseUrl.replace(/\/api$/, ''));
  });
  after(async () => api?.close());

  it("routes like the export: pages, dynamic pages, assets, with the export's 404 page", async () => {
    const cases: [string, string][] = [
      ['/', 'home'],
      ['/dashboard', 'dashboard'],
      ['/dashboard/', 'dashboard'],
      ['/workflows/S12', 'editor'],
      ['/sessions/u1', 'user sessions'],
      ['/sessions/u1/s9', 'one session'],
      ['/rag/indices/new', 'new index'],
      ['/rag/indices/VI3', 'an index'],
    ];
    for (const [p, text] of cases) {
      const res = await site.get(p);
      assert.equal(res.status, 200, p);
      assert.match(res.text, new RegExp(text), p);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/, p);
      assert.equal(res.headers.get('cache-control'), 'no-cache', p);
    }
    const missing = await site.get('/no/such/page');
    assert.equal(missing.status, 404);
    assert.match(missing.text, /not here/);
  });

  it('serves assets with their content type; hashed build assets are cached for a year', async () => {
    const js = await site.get('/_next/static/chunks/app-1234.js');
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    const css = await site.get('/_next/static/css/app.css');
    assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
    const icon = await site.get('/favicon.ico');
    assert.equal(icon.headers.get('cache-control'), 'public, max-age=3600');
  });

  it('leaves the API where it is', async () => {
    assert.equal((await site.get('/api/health/')).status, 200);
    const unknown = await site.get('/api/no-such-route');
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { detail: 'Not Found' });
  });

  it('never serves a file outside the export', async () => {
    const raw = rawClient(api.baseUrl.replace(/\/api$/, ''));
    for (const p of [
      '/../package.json',
      '/%2e%2e/package.json',
      '/_next/%2e%2e/%2e%2e/package.json',
      '/..%2fpackage.json',
      '/%00',
      '/workflows/%2e%2e%2f%2e%2e%2fpackage.json',
      '/%E0%A4%A',
    ]) {
      const res = await raw.request({ method: 'GET', path: p });
      assert.ok(res.status === 404 || res.status === 400, `${p} → ${res.status}`);
      assert.doesNotMatch(res.body.toString(), /"name": "spur"/, p);
    }
  });

  it('without the UI the api still starts and / says why; SPUR_WEB_UI=false turns it off', async () => {
    for (const [env, why] of [
      [{ SPUR_WEB_UI_DIR: path.join(stack.tmpDir, 'nothing-here') }, /not installed.*scripts\/setup\.sh/s],
      [{ SPUR_WEB_UI: 'false' }, /turned off/],
    ] as const) {
      const bare = await startApi(env);
      try {
        const home = await client(bare.baseUrl.replace(/\/api$/, '')).get('/');
        assert.equal(home.status, 200);
        assert.match(home.text, why);
        assert.equal((await client(bare.baseUrl).get('/health/')).status, 200);
      } finally {
        await bare.close();
      }
    }
  });
});
