import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, makeKey, makeUser, ROLE_NAMES, type RoleName, userWithKey } from '../support/access';
import { startApi, type TestApi } from '../support/api';
import { changedDocuments, databaseState, type DatabaseState } from '../support/db-state';
import { client } from '../support/http';
import {
  type Operation,
  opName,
  operationsOf,
  type Probe,
  probeOf,
  send,
  type Targets,
} from '../support/operation-walk';
import { MARK, seed } from './attack-corpus';

const ADMIN_KEY = 'spur_role-matrix-admin-key-0123456789';
/** No worker takes the seeded run's pause action in the control: it goes as a signal after 1 s, not 5. */
const FAST_PAUSE_ACTIONS = { SPUR_PAUSE_ACTION_WAIT_SECONDS: '1' };

/**
 * The oracle, written from the issue rather than read from src/access/permissions.ts: a viewer
 * reads and manages its own keys; an approver also decides pauses; an operator also starts,
 * cancels and reruns runs; a builder also changes what is built (workflows, datasets, files, RAG,
 * schedules, triggers, evals, …) and deletes finished runs; an admin also manages the workspace's
 * members, provider limits and stored credentials, prunes its expired runs at once, and (an admin of `default`: the installation's) users, fleet-wide limits
 * and prices, every workspace's usage, and reads the audit trail. Each role holds what the roles
 * below it hold.
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
    'members.manage',
    'limits.manage',
    'credentials.manage',
    'retention.prune',
    'users.manage',
    'fleet.manage',
    'usage.all',
    'audit.read',
  ],
};
/** The only routes that answer strangers: health (its status only) and a webhook, whose token is its credential. */
const ANYONE = new Set(['GET /health', 'POST /hooks/{token}', 'POST /callbacks/{token}']);
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
        const probe = await probeOf(op, targets, { real: false }, headers);
        const answer = await send(origin, probe);
        assert.ok(![401, 403].includes(answer.status), `${role}: ${probe.what} → ${answer.status} ${answer.text}`);
      }
      const refused = await Promise.all(
        operations
          .filter((op) => !holds(op))
          .map(async (op) => ({ op, probe: await probeOf(op, targets, { real: true }, headers) })),
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
      const probe = await probeOf(op, targets, { real: true }, bearer(ADMIN_KEY));
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
