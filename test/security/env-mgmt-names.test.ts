import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { hashApiKey } from '../../src/http/api-keys';
import { SETTABLE_VARIABLES } from '../../src/modules/env-mgmt/providers';
import { startApi, type TestApi } from '../support/api';
import { client } from '../support/http';

const KEY = 'spur_env-mgmt-names-test-key';
const MARKER = 'spur-env-marker-5f1c';

/** Names that would reconfigure a process (or alias a real one) if a writer took them. */
const REFUSED = [
  'NODE_OPTIONS',
  'PATH',
  'SPUR_SECRET_KEY',
  'SPUR_API_KEY_HASHES',
  'LD_PRELOAD',
  'openai_api_key',
  'OPENAI_API_KEY=x',
  'A=B',
  'OPENAI_API_KEY\u0000',
  '\u0000',
  '__proto__',
  'constructor',
];

describe('security: env management takes only Spur’s own variable names', function () {
  this.timeout(60_000);
  let api: TestApi;
  const auth = { authorization: `Bearer ${KEY}` };
  let http: ReturnType<typeof client>;

  /** What a reader can see of the stored set: the listing, each name's (masked) value, and the raw documents. */
  async function storedState() {
    const names = (await http.request<string[]>('GET', '/env-mgmt/', undefined, auth)).body;
    const values = await Promise.all(
      names.map(async (n) => (await http.request('GET', `/env-mgmt/${n}`, undefined, auth)).body),
    );
    const docs = await api.mongo.collection('env_vars').find().sort({ _id: 1 }).toArray();
    return { names, values, docs: JSON.stringify(docs) };
  }

  before(async () => {
    api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(KEY) });
    http = client(api.baseUrl);
    assert.equal(
      (await http.request('POST', '/env-mgmt/', { name: 'OPENAI_API_KEY', value: 'sk-before-0123456789' }, auth))
        .status,
      200,
    );
  });
  after(async () => api?.close());

  it('POST of NODE_OPTIONS, PATH, SPUR_*, LD_PRELOAD, a lower-case spelling, or a name with = or NUL: 422 naming the allowed set, nothing stored, no process env changed', async () => {
    const before = await storedState();
    const processEnv = JSON.stringify(process.env);
    for (const name of REFUSED) {
      const res = await http.request<{ detail: { type: string; loc: string[]; msg: string }[] }>(
        'POST',
        '/env-mgmt/',
        { name, value: `--require /tmp/${MARKER}.js` },
        auth,
      );
      assert.equal(res.status, 422, JSON.stringify(name));
      const [detail] = res.body.detail;
      assert.deepEqual(detail?.loc, ['body', 'name'], JSON.stringify(name));
      assert.equal(detail?.type, 'enum');
      for (const allowed of ['OPENAI_API_KEY', 'OLLAMA_BASE_URL', 'GITHUB_API_BASE', 'XAI_API_KEY'])
        assert.ok(detail.msg.includes(`'${allowed}'`), `the 422 names ${allowed}`);
    }
    assert.deepEqual(await storedState(), before);
    assert.equal(JSON.stringify(process.env), processEnv, "the api's process environment is untouched");
    assert.ok(!before.docs.includes(MARKER));
  });

  it("GET and DELETE of those names answer 404 (Key not found as PySpur, or the gate's for a name no canonical path holds) and remove nothing", async () => {
    const before = await storedState();
    for (const name of REFUSED) {
      for (const method of ['GET', 'DELETE']) {
        const res = await http.request(method, `/env-mgmt/${encodeURIComponent(name)}`, undefined, auth);
        assert.equal(res.status, 404, `${method} ${JSON.stringify(name)}`);
        // A NUL or a `/` escaped into the path never reaches the route: the gate refuses the path.
        const canonical = !/[\u0000-\u001f/]/.test(name);
        if (canonical) assert.deepEqual(res.body, { detail: 'Key not found' }, `${method} ${JSON.stringify(name)}`);
        else assert.match(res.body.detail, /not in canonical form/, `${method} ${JSON.stringify(name)}`);
        assert.ok(!res.text.includes('sk-b'), 'no stored value comes out');
      }
    }
    assert.equal((await http.request('DELETE', '/env-mgmt/NODE_OPTIONS', undefined, auth)).status, 404);
    assert.deepEqual((await http.request('GET', '/env-mgmt/PATH', undefined, auth)).body, { detail: 'Key not found' });
    assert.deepEqual(await storedState(), before);
  });

  it('a known name still works', async () => {
    const set = await http.request(
      'POST',
      '/env-mgmt/',
      { name: 'OPENAI_API_BASE', value: 'http://127.0.0.1:9/v1' },
      auth,
    );
    assert.equal(set.status, 200);
    assert.deepEqual((await http.request('GET', '/env-mgmt/OPENAI_API_BASE', undefined, auth)).body, {
      name: 'OPENAI_API_BASE',
      value: 'http://127.0.0.1:9/v1',
    });
  });

  it('every variable name a node, the RAG embedder or AI assist reads from env management is settable', () => {
    const read = new Set<string>();
    const literal = /(?:secret|[sS]etting|requireSetting)\([^)]*?'([A-Z][A-Z0-9_]+)'/g;
    for (const file of sourceFiles([
      'src/nodes',
      'src/rag',
      'src/modules/ai',
      'src/modules/rag',
      'temporal/activities',
    ])) {
      for (const match of readFileSync(file, 'utf8').matchAll(literal)) read.add(match[1]!);
    }
    assert.ok(read.size >= 15, `found ${read.size} names: the pattern still matches how nodes read settings`);
    const settable = new Set<string>(SETTABLE_VARIABLES);
    assert.deepEqual(
      [...read].filter((n) => !settable.has(n)),
      [],
    );
  });
});

function sourceFiles(dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const full = path.join(dir, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (full.endsWith('.ts')) out.push(full);
    }
  };
  for (const d of dirs) walk(path.join(REPO_ROOT, d));
  return out;
}
