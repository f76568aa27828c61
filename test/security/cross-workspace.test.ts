import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, memberWithKey } from '../support/access';
import { startApi, type TestApi } from '../support/api';
import { AUDIT_COLLECTIONS } from '../support/audit';
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
import { SpurWorkspace } from '../../src/contracts/search-attributes';
import { onSpurQueues } from '../support/spur-queues';
import { MARK, seed, tokenRouteEffects } from './attack-corpus';

const ADMIN_KEY = 'spur_cross-workspace-admin-key-0123456789';
const A = 'default';

/**
 * Installation-wide by design (docs/security.md, "What a workspace does not isolate"): an admin of
 * any workspace manages them, so B's admin key is served there. Not sent: each would change the
 * installation, not A.
 */
const INSTALLATION_WIDE: ReadonlyArray<[prefix: string, reason: string]> = [
  ['/access/users/', 'users are the installation’s: one user may hold keys in several workspaces'],
  ['/access/keys/', 'an admin makes keys in any workspace (that is how B’s key was made)'],
  ['/access/workspaces/', 'admins create, rename and delete workspaces'],
  ['/access/audit/', 'the audit trail is the installation’s, read by admins'],
  ['/limits/fleet/', 'fleet-wide provider limits are the installation’s'],
  ['/usage/prices/', 'model prices are the installation’s'],
  ['/usage/workspaces/', 'every workspace’s usage, an installation admin’s view'],
];

/** Operations not sent, each with why. */
const NOT_SENT: Readonly<Record<string, string>> = {
  'POST /hooks/{token}':
    'the token is the credential and acts in its trigger’s workspace by design: no key is asked for, so B’s key changes nothing',
  'POST /code_convert/create_from_code': 'names nothing of A and waits for a worker, which this api has none of',
};

/**
 * Operations that name an object of A and are not answered 404, each with why: the walk asserts
 * their answer is the very one an id that exists nowhere gets, so it reveals nothing of A.
 */
const SAME_AS_NO_SUCH_ID: Readonly<Record<string, string>> = {
  'GET /wf/{workflow_id}/runs/':
    'a filter of the runs, not a lookup of the workflow: any id that has no runs here is 200 [], as in PySpur',
  'POST /runs/actions/':
    'a filter of the runs, not a lookup of the workflow: a workflow with no runs here matches none (sent as a dry run, whose answer names no new action)',
};

/**
 * Bodies that get past validation to the lookup of A's object (the role matrix's are refused
 * before their body is read, so some are not valid): a 400 or 422 would hide a leak behind them.
 */
const bodiesReachingTheLookup = (t: Targets): Record<string, unknown> => ({
  // A signed-in user decides as themself: another name is a 403 before the run is looked up.
  'POST /wf/process_pause_action/{run_id}/': { inputs: {}, user_id: 'current-user', action: 'APPROVE', comments: null },
  // Empty code is a 400 before the workflow is looked up (PySpur's order).
  'PUT /code_convert/{workflow_id}': { code: `# ${MARK}` },
  // A dry run: its answer (no id, no time) is the same for any workflow that has no runs here.
  'POST /runs/actions/': { filter: { workflow_id: t.workflow }, action: 'cancel', dry_run: true },
  'POST /evals/compare/': { suite: t.suite, workflow_id: t.workflow, versions: [1, 2] },
  'POST /rag/indices/': {
    name: `${MARK}-index`,
    collection_id: t.collection,
    embedding: { provider: 'openai', model: 'openai/text-embedding-3-small' },
  },
});

/**
 * Routes where B is still served something of A: each an open hole, with why it is not fixed
 * here. The walk lets these fail (and fails any listed route that no longer leaks, so the list only
 * shrinks); every other route must answer as above. Empty: the walk's leaks were fixed
 * (/files/ by the file's workflow, the worker's file reads likewise).
 */
const KNOWN_LEAKS: Readonly<Record<string, string>> = {};

const excluded = (op: Operation): string | undefined =>
  NOT_SENT[opName(op)] ?? INSTALLATION_WIDE.find(([prefix]) => op.path.startsWith(prefix))?.[1];

/**
 * What changes A's objects goes after what reads them, deletions last and the narrowest first (one
 * file before all of a workflow's): a leak then shows on every route it reaches.
 */
const rank = (op: Operation) =>
  op.method === 'GET' ? 0 : op.method === 'DELETE' ? 3 - (op.path.match(/\{/g)?.length ?? 0) / 10 : 1;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `value` as a whole token: `S1` is not found in `S12`. */
const token = (value: string) => new RegExp(`(?<![A-Za-z0-9_-])${escape(value)}(?![A-Za-z0-9_-])`);

describe('security: another workspace’s admin reaches nothing of A on any route (the cross-workspace walk)', function () {
  this.timeout(600_000);
  let api: TestApi;
  let origin: string;
  let operations: Operation[];
  let targets: Targets;
  /** A's ids, as a request names them and a leak would show them. */
  let idsOfA: string[];
  /** A's ids and names. */
  let secretsOfA: string[];
  let workspaceB: string;
  let keyB: string;
  const admin = () => client(api.baseUrl, bearer(ADMIN_KEY));
  /**
   * A's documents: those of `default`, and those of no workspace (GridFS files: A's datasets and
   * test files, and the installation's users and credentials). Left out: the audit trail (it
   * records B's attempts too), the id counters (B's own objects draw from them) and the settings
   * counter (B's own settings move it: it holds a number, nothing of A).
   */
  const stateOfA = () =>
    databaseState(api.mongo, {
      filter: { workspace_id: { $in: [A, null] } },
      skipCollections: [...AUDIT_COLLECTIONS, 'counters', 'settings_generation'],
    });
  /** What B's requests could have started or signalled for A: runs of A's workflow anywhere, and the seeded run's history. */
  async function startedForA() {
    const runs = await api.models.Run.countDocuments({ workflow_id: targets.workflow });
    const seededRun = await tokenRouteEffects(api, targets);
    return { runsOfA: runs, seededRunEvents: seededRun.runEvents };
  }
  /** This api's Temporal workflows, each as `<id> (<type>, SpurWorkspace <workspace>)`. */
  async function temporalWorkflows(): Promise<string[]> {
    const found: string[] = [];
    for await (const wf of api.temporal.workflow.list({ query: onSpurQueues(api.env.SPUR_TASK_QUEUE as string) }))
      found.push(`${wf.workflowId} (${wf.type}, SpurWorkspace ${String(wf.typedSearchAttributes.get(SpurWorkspace))})`);
    return found.sort();
  }

  /** The A ids and names `answer` holds that `request` did not itself send. */
  function leaked(probe: Probe, text: string): string[] {
    const sent = `${probe.request.path} ${String(probe.request.body ?? '')}`;
    return secretsOfA.filter((s) => token(s).test(text) && !token(s).test(sent));
  }
  /** The A ids the request names (in its path, query or body). */
  const namesOfA = (probe: Probe) =>
    idsOfA.filter((s) => token(s).test(`${probe.request.path} ${String(probe.request.body ?? '')}`));

  /** Each id of A replaced by one that names nothing (`S1` → `S1999999`). */
  function withNoSuchIds(probe: Probe): Probe;
  function withNoSuchIds(text: string): string;
  function withNoSuchIds(what: Probe | string): Probe | string {
    const swap = (text: string) => idsOfA.reduce((t, id) => t.replace(new RegExp(token(id), 'g'), `${id}999999`), text);
    if (typeof what === 'string') return swap(what);
    const body = what.request.body === undefined ? undefined : swap(String(what.request.body));
    return { what: swap(what.what), request: { ...what.request, path: swap(what.request.path), body } };
  }

  before(async () => {
    api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY), SPUR_WEB_UI: 'false' });
    origin = new URL(api.baseUrl).origin;
    const openapi = await admin().get('/openapi.json');
    assert.equal(openapi.status, 200);
    operations = operationsOf(openapi.body);
    // Workspace A (`default`): one object of every kind, with a budget and a published MCP tool.
    const seeded = await seed(api, bearer(ADMIN_KEY));
    const budget = await admin().put(`/wf/${seeded.workflow}/budget/`, { per_run_usd: 1, on_exceed: 'fail' });
    assert.equal(budget.status, 200, budget.text);
    const published = await admin().put(`/wf/${seeded.workflow}/mcp/`, { enabled: true, tool_name: `${MARK}_tool` });
    assert.equal(published.status, 200, published.text);
    // Workspace B, and its admin (of B only): the role gate lets every workspace request through, so only the workspace refuses.
    const made = await admin().post('/access/workspaces/', { name: `${MARK}-b` });
    assert.equal(made.status, 201, made.text);
    workspaceB = made.body.id;
    const { user: userB, key } = await memberWithKey(admin(), workspaceB, `${MARK}-b-admin`, 'admin');
    assert.equal(key.workspace_id, workspaceB);
    keyB = key.key;
    const files = await admin().get(`/files/${seeded.workflow}`);
    assert.equal(files.status, 200, files.text);
    const testFileName = (files.body as { name: string }[])[0]?.name;
    assert.ok(testFileName, `A's test file is listed: ${files.text}`);
    targets = { ...seeded, accessUser: userB.id, accessKey: key.id, testFileName };
    idsOfA = [
      seeded.workflow,
      seeded.run,
      seeded.dataset,
      seeded.outputFile,
      seeded.collection,
      seeded.document,
      seeded.index,
      seeded.user,
      seeded.session,
      seeded.suite,
      seeded.evalRun,
      seeded.comparison,
      seeded.schedule,
      seeded.trigger,
      seeded.hookToken,
      seeded.pause,
      seeded.runAction,
    ];
    secretsOfA = [
      ...idsOfA,
      `${MARK}-workflow`,
      `${MARK}-dataset`,
      `${MARK}-collection`,
      `${MARK}.txt`,
      `${MARK}-seeded-index`,
      `${MARK}-user`,
      `${MARK}-suite`,
      `${MARK}-schedule`,
      `${MARK}-trigger`,
      `${MARK}-pause`,
      `${MARK}.jsonl`,
      `${MARK}_tool`,
    ];
  });
  after(async () => api?.close());

  it('names only served operations in its lists of exceptions', () => {
    const served = new Set(operations.map(opName));
    const listed = [
      ...Object.keys(NOT_SENT),
      ...Object.keys(SAME_AS_NO_SUCH_ID),
      ...Object.keys(KNOWN_LEAKS),
      ...Object.keys(bodiesReachingTheLookup(targets)),
    ];
    assert.deepEqual(
      listed.filter((name) => !served.has(name)),
      [],
      'listed but not in the OpenAPI document',
    );
    for (const [prefix] of INSTALLATION_WIDE)
      assert.ok(
        operations.some((op) => op.path.startsWith(prefix)),
        `no operation under ${prefix}`,
      );
  });

  it('walks every operation with B’s admin key and A’s ids: 404, and no answer holds an id or name of A', async () => {
    const sent = operations.filter((op) => excluded(op) === undefined).sort((a, b) => rank(a) - rank(b));
    assert.ok(sent.length > 80, `${sent.length} operations sent of ${operations.length}`);
    const beforeA = await stateOfA();
    // What a leak on the routes of the objects a worker makes would change is in the state compared.
    for (const [collection, id] of [
      ['rag_documents', targets.document],
      ['rag_chunk_pages', `${targets.document}:0`],
      ['vector_indices', targets.index],
      ['eval_runs', targets.evalRun],
      ['eval_comparisons', targets.comparison],
    ])
      assert.ok(beforeA.documents.has(`${collection}/${JSON.stringify(id)}`), `${collection} ${id} is compared`);
    const startedBefore = await startedForA();
    const temporalBefore = await temporalWorkflows();
    const failures: string[] = [];
    const leaksSeen = new Set<string>();
    for (const op of sent) {
      const probe = await probeOf(
        op,
        targets,
        { real: true, realStreams: true, bodies: bodiesReachingTheLookup(targets) },
        bearer(keyB),
      );
      let answer;
      try {
        answer = await send(origin, probe);
      } catch (err) {
        failures.push(`${opName(op)}: ${(err as Error).message}`);
        continue;
      }
      const what = `${opName(op)} (${probe.what}) → ${answer.status} ${answer.text.slice(0, 200)}`;
      const problems: string[] = [];
      const shown = leaked(probe, answer.text);
      if (shown.length > 0) problems.push(`answers A's ${shown.join(', ')}`);
      if (namesOfA(probe).length > 0 && opName(op) in SAME_AS_NO_SUCH_ID) {
        const control = await send(origin, withNoSuchIds(probe));
        if (control.status !== answer.status || control.text !== withNoSuchIds(answer.text))
          problems.push(
            `names A's ${namesOfA(probe).join(', ')} and is answered otherwise than ids of nothing: ${control.status} ${control.text.slice(0, 200)}`,
          );
      } else if (namesOfA(probe).length > 0 && answer.status !== 404)
        problems.push(`names A's ${namesOfA(probe).join(', ')} and is answered ${answer.status}, not 404`);
      if (problems.length === 0) continue;
      if (opName(op) in KNOWN_LEAKS) leaksSeen.add(opName(op));
      else failures.push(`${what}: ${problems.join('; ')}`);
    }
    for (const route of Object.keys(KNOWN_LEAKS))
      if (!leaksSeen.has(route)) failures.push(`${route} is listed in KNOWN_LEAKS but no longer leaks: remove it`);
    assert.deepEqual(failures, [], `B reached A:\n${failures.join('\n')}`);
    await assertAUnchanged(beforeA, startedBefore, temporalBefore);
  });

  /** A's documents and what runs for A are as they were: B changed, deleted and started nothing of A. */
  async function assertAUnchanged(
    beforeA: DatabaseState,
    startedBefore: Awaited<ReturnType<typeof startedForA>>,
    temporalBefore: string[],
  ) {
    const changes = changedDocuments(beforeA, await stateOfA());
    assert.deepEqual(
      changes.filter((c) => !c.endsWith(' (created)')),
      [],
      'B’s requests changed or deleted documents of A',
    );
    // Created: only B's own files (GridFS has no workspace), none in A and none naming A.
    const created = new Set(changes.filter((c) => c.endsWith(' (created)')).map((c) => c.replace(/ \(created\)$/, '')));
    const intoA: string[] = [];
    for (const name of (await api.mongo.db!.listCollections().toArray()).map((c) => c.name))
      for (const doc of await api.mongo
        .db!.collection(name)
        .find({ workspace_id: { $in: [A, null] } })
        .toArray()) {
        const key = `${name}/${JSON.stringify(doc._id)}`;
        if (!created.has(key)) continue;
        const named = idsOfA.filter((id) => token(id).test(JSON.stringify(doc)));
        if (doc.workspace_id === A || named.length > 0)
          intoA.push(`${key} (${String(doc.workspace_id)}, names ${named.join(', ')})`);
      }
    assert.deepEqual(intoA, [], 'B’s requests created documents in A or naming A');
    // Temporal's visibility follows a start by up to a second.
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(await startedForA(), startedBefore, 'B’s requests started or signalled a workflow of A');
    // What B started (an ingest of the collection it created) is B's and names nothing of A.
    const started = (await temporalWorkflows()).filter((w) => !temporalBefore.includes(w));
    const notB = started.filter(
      (w) => !w.endsWith(`SpurWorkspace ${workspaceB})`) || idsOfA.some((id) => token(id).test(w)),
    );
    assert.deepEqual(
      notB,
      [],
      `Temporal workflows B's requests started outside B or for A (all started: ${started.join(', ')})`,
    );
    // What B created names nothing of A (a session of A's workflow, a suite of A's dataset, …).
    const ofB = await databaseState(api.mongo, { filter: { workspace_id: workspaceB } });
    const namingA: string[] = [];
    for (const name of (await api.mongo.db!.listCollections().toArray()).map((c) => c.name)) {
      const docs = await api.mongo.db!.collection(name).find({ workspace_id: workspaceB }).toArray();
      for (const doc of docs) {
        const text = JSON.stringify(doc);
        const found = idsOfA.filter((id) => token(id).test(text));
        if (found.length > 0) namingA.push(`${name}/${JSON.stringify(doc._id)} names ${found.join(', ')}`);
      }
    }
    assert.ok(ofB.documents.size > 0, 'B created its own objects (the walk reached the routes)');
    assert.deepEqual(namingA, [], 'documents B created name objects of A');
  }

  it('MCP tools/list with B’s key does not list A’s published tool; A’s key does', async () => {
    const list = async (key: string) => {
      const res = await fetch(`${api.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          ...bearer(key),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      return text;
    };
    assert.ok((await list(ADMIN_KEY)).includes(`${MARK}_tool`), 'A lists its own tool (the control)');
    const ofB = await list(keyB);
    for (const secret of secretsOfA)
      assert.ok(
        !token(secret).test(ofB),
        `POST /mcp tools/list with B's key names A's ${secret}: ${ofB.slice(0, 300)}`,
      );
  });

  it('MCP tools/call of A’s published tool with B’s key is an unknown tool: no run of A starts', async () => {
    const runsOfA = async () => {
      const res = await admin().get(`/wf/${targets.workflow}/runs/`);
      assert.equal(res.status, 200, res.text);
      return (res.body as { id: string }[]).map((r) => r.id).sort();
    };
    const before = await runsOfA();
    const res = await fetch(`${api.baseUrl}/mcp`, {
      method: 'POST',
      headers: { ...bearer(keyB), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: `${MARK}_tool`, arguments: {} },
      }),
    });
    const text = await res.text();
    assert.match(
      text,
      /No published workflow is the tool/,
      `B's call is refused as a tool that does not exist: ${text}`,
    );
    for (const secret of secretsOfA.filter((s) => s !== `${MARK}_tool`))
      assert.ok(!token(secret).test(text), `tools/call with B's key names A's ${secret}: ${text.slice(0, 300)}`);
    assert.deepEqual(await runsOfA(), before, "B's call started no run of A's workflow");
  });
});
