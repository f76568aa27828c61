import assert from 'node:assert/strict';
import http from 'node:http';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, makeKey, makeUser, ROLE_NAMES, type RoleName, userWithKey } from '../support/access';
import { startApi, type TestApi } from '../support/api';
import { changedDocuments, databaseState, type DatabaseState } from '../support/db-state';
import { client } from '../support/http';
import type { RawRequest } from '../support/raw-http';
import { MARK, multipartBody, probes, type Seeded, seed } from './attack-corpus';

const ADMIN_KEY = 'spur_role-matrix-admin-key-0123456789';
/** No worker takes the seeded run's pause action in the control: it goes as a signal after 1 s, not 5. */
const FAST_PAUSE_ACTIONS = { SPUR_PAUSE_ACTION_WAIT_SECONDS: '1' };

/**
 * The oracle, written from the issue rather than read from src/access/permissions.ts: a viewer
 * reads and manages its own keys; an approver also decides pauses; an operator also starts,
 * cancels and reruns runs; a builder also changes what is built (workflows, datasets, files, RAG,
 * schedules, triggers, evals, …); an admin also manages users, stored credentials, limits and
 * prices, and reads the audit trail. Each role holds what the roles below it hold.
 */
const HOLDS: Record<RoleName, readonly string[]> = {
  viewer: ['read', 'self'],
  approver: ['read', 'self', 'pause.decide'],
  operator: ['read', 'self', 'pause.decide', 'run'],
  builder: ['read', 'self', 'pause.decide', 'run', 'build'],
  admin: [
    'read',
    'self',
    'pause.decide',
    'run',
    'build',
    'users.manage',
    'credentials.manage',
    'limits.manage',
    'audit.read',
  ],
};
/** The only routes that answer strangers: health (its status only) and a webhook, whose token is its credential. */
const ANYONE = new Set(['GET /health', 'POST /hooks/{token}']);
/**
 * What waits for a worker, which this api has none of (a blocking run, a chat completion, code
 * parsed on the worker): the control leaves them out, the refusals still cover them.
 */
const BLOCKS_WITHOUT_A_WORKER = new Set([
  'POST /wf/{workflow_id}/run/',
  'POST /wf/{workflow_id}/runv2/',
  'POST /wf/{workflow_id}/run_partial/',
  'POST /code_convert/create_from_code',
  'POST /v1/chat/completions',
  'POST /api/v1/chat/completions',
]);

/** One operation of the OpenAPI document, with what it takes. */
interface Operation {
  method: string;
  /** OpenAPI's path (`{name}` parameters), under /api. */
  path: string;
  permission: string;
  body: 'json' | 'multipart' | 'none';
  /** Required query parameters. */
  query: string[];
  /** Answers an event stream: only its status line is read. */
  stream: boolean;
}

const opName = (op: Pick<Operation, 'method' | 'path'>) => `${op.method} ${op.path}`;

interface OpenApiOperation {
  'x-spur-permission'?: string;
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, unknown> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

function operationsOf(document: { paths: Record<string, Record<string, OpenApiOperation>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'patch', 'delete'].includes(method)) continue;
      const types = Object.keys(op.requestBody?.content ?? {});
      ops.push({
        method: method.toUpperCase(),
        path,
        permission: op['x-spur-permission'] ?? '',
        body: types.includes('multipart/form-data') ? 'multipart' : types.length > 0 ? 'json' : 'none',
        query: (op.parameters ?? []).filter((p) => p.in === 'query' && p.required).map((p) => p.name),
        stream: Object.values(op.responses ?? {}).some((r) => 'text/event-stream' in (r.content ?? {})),
      });
    }
  }
  return ops;
}

/** The seeded objects beyond the attack corpus's: an access user and key to manage, a price to remove. */
interface Targets extends Seeded {
  accessUser: string;
  accessKey: string;
}

/**
 * A real id for each path parameter, so a request let through would read or change a real object.
 * RAG documents and indices, eval runs and comparisons need a worker to exist: those ids name
 * nothing (a refusal there still shows in the database if it was not one).
 */
function realValue(name: string, path: string, t: Targets): string {
  const values: Record<string, string> = {
    workflow_id: t.workflow,
    run_id: t.run,
    dataset_id: t.dataset,
    output_file_id: t.outputFile,
    collection_id: t.collection,
    document_id: 'D1',
    index_id: 'RI1',
    user_id: t.user,
    session_id: t.session,
    suite_id: t.suite,
    eval_run_id: 'ER1',
    comparison_id: 'EC1',
    schedule_id: t.schedule,
    trigger_id: t.trigger,
    token: t.hookToken,
    provider: 'openai',
    name: path.startsWith('/usage/prices/') ? 'gpt-4o-mini' : 'OPENAI_API_KEY',
    file_name: 'note.txt',
    id: path.startsWith('/access/users/')
      ? t.accessUser
      : path.startsWith('/access/workspaces/')
        ? 'default'
        : t.accessKey,
  };
  const value = values[name];
  if (value === undefined) throw new Error(`no seeded value for the path parameter {${name}} of ${path}: add one`);
  return value;
}

/** A value that names nothing: an allowed request with it is answered 404 or 422 and changes nothing seeded. */
const noValue = (name: string) => `${name.replace(/_/g, '')}0nothing`;

/** Bodies of the state-changing operations the attack corpus has no probe for: each would change something. */
function bodyFor(op: Operation, t: Targets): unknown {
  const bodies: Record<string, unknown> = {
    'POST /wf/{workflow_id}/run/': { initial_inputs: { in: { x: 'y' } } },
    'POST /wf/{workflow_id}/runv2/': { initial_inputs: { in: { x: 'y' } } },
    'POST /wf/{workflow_id}/start_batch_run/': { dataset_id: t.dataset },
    'POST /wf/{workflow_id}/run_partial/': { node_id: 'in', initial_inputs: { in: { x: 'y' } } },
    'POST /wf/{workflow_id}/duplicate/': {},
    'POST /schedules/{schedule_id}/backfill/': {
      start_time: new Date(Date.now() - 3 * 365 * 86_400_000).toISOString(),
      end_time: new Date().toISOString(),
    },
    'POST /code_convert/create_from_code': { code: `# ${MARK}` },
    'POST /ai/generate_message/': { description: MARK, message_type: 'system' },
    'POST /evals/compare/': { suite: t.suite, workflow_id: t.workflow, versions: [1, 1] },
    'POST /rag/indices/': {
      name: `${MARK}-index`,
      collection_id: t.collection,
      embedding: { provider: 'openai', model: 'text-embedding-3-small' },
    },
    'POST /rag/indices/{index_id}/retrieve/': { query: MARK },
    'POST /access/users/': { username: `${MARK}-made`, role: 'admin', password: 'a-long-password-1' },
    'PUT /access/users/{id}/': { role: 'admin' },
    'POST /access/keys/': { name: `${MARK}-made`, role: 'admin', user_id: t.accessUser },
    'POST /access/workspaces/': { name: `${MARK}-workspace` },
    'PUT /access/workspaces/{id}/': { name: `${MARK}-renamed` },
  };
  return bodies[opName(op)] ?? {};
}

interface Probe {
  what: string;
  request: RawRequest;
}

/**
 * The operation as a request: real ids and a body that would change something (`real`), or ids
 * that name nothing and an empty body (`!real`: an allowed request then touches nothing seeded).
 */
async function probeOf(op: Operation, t: Targets, real: boolean, headers: Record<string, string>): Promise<Probe> {
  const fill = (name: string) =>
    encodeURIComponent(real || op.method === 'GET' ? realValue(name, op.path, t) : noValue(name));
  // An event stream of a real run stays open while the run is PENDING: it is asked about nothing.
  let path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => (op.stream ? noValue(name) : fill(name)));
  const queryValue = (q: string) => (q === 'name' ? `${MARK}-made` : fill(q));
  if (op.query.length > 0) path += `?${op.query.map((q) => `${q}=${queryValue(q)}`).join('&')}`;
  const what = `${op.method} /api${path}`;
  const corpus = probes(t).find((p) => p.method === op.method && p.path === path);
  const request: RawRequest = { method: op.method, path: `/api${path}`, headers: { ...headers, ...corpus?.headers } };
  if (op.body === 'multipart') {
    const fields = real ? (corpus?.form ?? { metadata: JSON.stringify({ name: `${MARK}-made` }) }) : {};
    const field = /\/ds\/|preview_chunk/.test(op.path) ? 'file' : 'files';
    const { body, type } = await multipartBody(fields, real ? { [field]: `question\n${MARK}\n` } : {});
    request.body = body;
    request.headers = { ...request.headers, 'content-type': type };
  } else if (op.body === 'json') {
    request.body = JSON.stringify(real ? (corpus?.json ?? bodyFor(op, t)) : {});
    request.headers = { ...request.headers, 'content-type': 'application/json' };
  }
  return { what, request };
}

interface Answer {
  status: number;
  text: string;
}

/** Sends a probe; of an event stream only the status line is awaited (a PENDING run's stream stays open). */
function send(origin: string, probe: Probe): Promise<Answer> {
  const url = new URL(origin);
  const { request } = probe;
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  return new Promise((resolve, reject) => {
    const out = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: request.path,
        headers: { ...request.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
      },
      (res) => {
        if (res.statusCode === 200 && /text\/event-stream/.test(res.headers['content-type'] ?? '')) {
          resolve({ status: 200, text: '' });
          out.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    out.on('error', reject);
    // A hang-free server never hits this: it names the request that hung instead of the test's timeout.
    out.setTimeout(30_000, () => out.destroy(new Error(`${probe.what}: no answer within 30 s`)));
    out.end(body);
  });
}

describe('security: every route against every role (the role matrix)', function () {
  this.timeout(300_000);
  let api: TestApi;
  let origin: string;
  let operations: Operation[];
  let targets: Targets;
  const keys = {} as Record<RoleName, string>;
  const admin = () => client(api.baseUrl, bearer(ADMIN_KEY));
  const state = () => databaseState(api.mongo);
  /** The database once nothing more changes by itself (what allowed requests may have started has settled). */
  async function settled(): Promise<DatabaseState> {
    let last = await state();
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const next = await state();
      if (next.digest === last.digest) return next;
      last = next;
    }
    throw new Error('the database kept changing with no request sent');
  }

  before(async () => {
    api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY), SPUR_WEB_UI: 'false', ...FAST_PAUSE_ACTIONS });
    origin = new URL(api.baseUrl).origin;
    const openapi = await admin().get('/openapi.json');
    assert.equal(openapi.status, 200);
    operations = operationsOf(openapi.body);
    const seeded = await seed(api, bearer(ADMIN_KEY));
    const target = await userWithKey(admin(), `${MARK}-target`, 'operator');
    targets = { ...seeded, accessUser: target.user.id, accessKey: target.key.id };
    // Something for each remaining refusal to remove or change.
    const price = await admin().put('/usage/prices/openai/gpt-4o-mini', {
      input_usd_per_mtok: 1,
      output_usd_per_mtok: 2,
    });
    assert.equal(price.status, 200, price.text);
    const budget = await admin().put(`/wf/${seeded.workflow}/budget/`, { per_run_usd: 1, on_exceed: 'fail' });
    assert.equal(budget.status, 200, budget.text);
    for (const role of ROLE_NAMES) keys[role] = (await userWithKey(admin(), `matrix-${role}`, role)).key.key;
  });
  after(async () => api?.close());

  it('reads every operation from the OpenAPI document, each naming a permission the roles know', () => {
    assert.ok(operations.length > 100, `${operations.length} operations`);
    const known = new Set([...Object.values(HOLDS).flat(), 'anyone']);
    for (const op of operations) {
      assert.ok(op.permission, `${opName(op)} has no x-spur-permission`);
      assert.ok(known.has(op.permission), `${opName(op)} needs '${op.permission}', which no role is known to hold`);
      assert.equal(op.permission === 'anyone', ANYONE.has(opName(op)), `${opName(op)}: anyone may call it?`);
      // A state change needs more than reading.
      if (op.method !== 'GET') assert.notEqual(op.permission, 'read', `${opName(op)} changes state with 'read'`);
    }
    for (const route of ANYONE)
      assert.ok(
        operations.some((op) => opName(op) === route),
        `${route} is served`,
      );
  });

  for (const role of ROLE_NAMES) {
    it(`${role}: answered on the routes of its permissions, refused (403 naming the permission) on all others, and the refusals change nothing`, async () => {
      const holds = (op: Operation) => op.permission === 'anyone' || HOLDS[role].includes(op.permission);
      const headers = bearer(keys[role]);
      for (const op of operations.filter(holds)) {
        const probe = await probeOf(op, targets, false, headers);
        const answer = await send(origin, probe);
        assert.ok(![401, 403].includes(answer.status), `${role}: ${probe.what} → ${answer.status} ${answer.text}`);
      }
      const refused = await Promise.all(
        operations
          .filter((op) => !holds(op))
          .map(async (op) => ({ op, probe: await probeOf(op, targets, true, headers) })),
      );
      assert.equal(refused.length === 0, role === 'admin', `${role} is refused ${refused.length} operations`);
      const before = await settled();
      for (const { op, probe } of refused) {
        const answer = await send(origin, probe);
        const what = `${role}: ${probe.what} → ${answer.status} ${answer.text}`;
        assert.equal(answer.status, 403, what);
        assert.match(JSON.parse(answer.text).detail, new RegExp(`'${op.permission.replace('.', '\\.')}'`), what);
      }
      await assertUnchanged(
        before,
        refused.map((r) => r.probe),
        role,
      );
    });
  }

  /**
   * Fails naming the documents that changed and the requests that did it: those naming a changed
   * document's id (a deletion does not repeat), and those that change the database again when sent
   * alone (a creation does).
   */
  async function assertUnchanged(before: DatabaseState, sent: Probe[], who: string): Promise<void> {
    const after = await state();
    if (after.digest === before.digest) return;
    const changed = changedDocuments(before, after);
    const ids = changed.map((c) => JSON.parse(/^[^/]+\/(.*) \(\w+\)$/.exec(c)?.[1] ?? '""') as unknown);
    const naming = sent.filter((p) =>
      ids.some((id) => typeof id === 'string' && `${p.what} ${String(p.request.body ?? '')}`.includes(id)),
    );
    const again: string[] = [];
    let current = after;
    for (const probe of sent) {
      await send(origin, probe);
      const next = await state();
      if (next.digest !== current.digest) again.push(`${probe.what} (${changedDocuments(current, next).join(', ')})`);
      current = next;
    }
    assert.fail(
      `${who}'s refused requests changed the database: ${changed.join(', ')}; ` +
        `the requests naming them: ${naming.map((p) => p.what).join(', ') || 'none'}; ` +
        `those changing it again when sent alone: ${again.join('; ') || 'none'}`,
    );
  }

  it("a user's key made with a weaker role acts with the key's role", async () => {
    const user = await makeUser(admin(), { username: `${MARK}-strong`, role: 'admin' });
    const weak = await makeKey(admin(), { name: 'weak', user_id: user.id, role: 'operator' });
    const asWeak = client(api.baseUrl, bearer(weak.key));
    const me = await asWeak.get('/access/me/');
    assert.equal(me.status, 200, me.text);
    assert.deepEqual(
      {
        role: me.body.role,
        via: me.body.via,
        key_id: me.body.key_id,
        user: me.body.user.id,
        userRole: me.body.user.role,
      },
      { role: 'operator', via: 'key', key_id: weak.id, user: user.id, userRole: 'admin' },
    );
    assert.deepEqual(me.body.permissions, HOLDS.operator);
    const before = await state();
    const build = await asWeak.post('/wf/', { name: `${MARK}-by-weak-key` });
    assert.equal(build.status, 403, build.text);
    assert.match(build.body.detail, /'build'/);
    const users = await asWeak.get('/access/users/');
    assert.equal(users.status, 403, users.text);
    const planted = await asWeak.post('/env-mgmt/', { name: 'ANTHROPIC_API_KEY', value: `${MARK}-planted` });
    assert.equal(planted.status, 403, planted.text);
    assert.equal((await state()).digest, before.digest, 'nothing changed');
    assert.equal((await asWeak.get('/wf/')).status, 200, 'the key still reads');
  });

  it('a key never outranks its maker: a viewer cannot make a stronger key, nor one for someone else (403), and none is stored', async () => {
    const viewer = client(api.baseUrl, bearer(keys.viewer));
    const builder = client(api.baseUrl, bearer(keys.builder));
    const before = await state();
    for (const role of ['approver', 'operator', 'builder', 'admin'] as const) {
      const res = await viewer.post('/access/keys/', { name: `${MARK}-up`, role });
      assert.equal(res.status, 403, `viewer makes a ${role} key: ${res.status} ${res.text}`);
      assert.ok(!('key' in (res.body as object)), 'no key in the refusal');
    }
    const forOther = await builder.post('/access/keys/', { name: `${MARK}-theirs`, user_id: targets.accessUser });
    assert.equal(forOther.status, 403, forOther.text);
    assert.equal((await state()).digest, before.digest, 'no key stored');
    const own = await viewer.post('/access/keys/', { name: `${MARK}-own` });
    assert.equal(own.status, 201, own.text);
    assert.equal(own.body.role, 'viewer', 'a key left without a role takes its maker’s');
  });

  it("a viewer key of an admin user, signed in on /login, gives a session that is still only a viewer's", async () => {
    const user = await makeUser(admin(), { username: `${MARK}-admin-user`, role: 'admin' });
    const viewerKey = await makeKey(admin(), { name: 'viewer key', user_id: user.id, role: 'viewer' });
    const login = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ api_key: viewerKey.key, next: '/' }).toString(),
    });
    assert.equal(login.status, 303, await login.text());
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    assert.match(cookie, /^spur_session=.+/);
    const inSession = client(api.baseUrl, { cookie, origin });
    const me = await inSession.get('/access/me/');
    assert.equal(me.status, 200, me.text);
    assert.deepEqual(
      { role: me.body.role, via: me.body.via, user: me.body.user.id },
      { role: 'viewer', via: 'session', user: user.id },
    );
    assert.equal((await inSession.get('/wf/')).status, 200, 'the session reads');
    const before = await state();
    for (const [method, path, body] of [
      ['POST', '/wf/', { name: `${MARK}-from-session` }],
      ['DELETE', `/wf/${targets.workflow}/`, undefined],
      ['POST', `/wf/${targets.workflow}/start_run/`, { initial_inputs: { in: { x: 'y' } } }],
      ['PUT', `/access/users/${user.id}/`, { role: 'admin' }],
      ['POST', '/access/keys/', { name: `${MARK}-admin-from-session`, role: 'admin' }],
    ] as const) {
      const res = await inSession.request(method, path, body);
      assert.equal(res.status, 403, `${method} ${path} in the viewer's session: ${res.status} ${res.text}`);
    }
    assert.equal((await state()).digest, before.digest, 'nothing changed');
  });

  it('the control: the refused state changes, sent with the admin key, are answered and change the database', async () => {
    const changes = operations.filter((op) => op.method !== 'GET' && !HOLDS.viewer.includes(op.permission));
    // What changes the seeded workflow's definition after what runs it, deletes last, the workflow's own last of all.
    const rank = (op: Operation) =>
      op.method === 'DELETE'
        ? op.path === '/wf/{workflow_id}/'
          ? 3
          : 2
        : /^\/wf\/\{workflow_id\}\/(reset\/)?$/.test(op.path)
          ? 1
          : 0;
    const before = await state();
    let answered = 0;
    for (const op of [...changes].sort((a, b) => rank(a) - rank(b))) {
      if (op.permission === 'anyone' || BLOCKS_WITHOUT_A_WORKER.has(opName(op))) continue;
      const probe = await probeOf(op, targets, true, bearer(ADMIN_KEY));
      const answer = await send(origin, probe);
      assert.ok(![401, 403, 405].includes(answer.status), `admin: ${probe.what} → ${answer.status} ${answer.text}`);
      answered++;
    }
    assert.ok(answered > 60, `${answered} state changes sent`);
    const after = await state();
    const changed = changedDocuments(before, after);
    for (const [kind, id] of [
      ['workflows', targets.workflow],
      ['datasets', targets.dataset],
      ['access_users', targets.accessUser],
    ])
      assert.ok(
        changed.includes(`${kind}/${JSON.stringify(id)} (deleted)`),
        `the seeded ${kind} ${id} was deleted: ${changed.join(', ')}`,
      );
  });
});
