import assert from 'node:assert/strict';
import { bearer, memberWithKey, userWithKey } from '../support/access';
import { AUDIT_COLLECTIONS } from '../support/audit';
import { type CallbackReceiver, startCallbackReceiver } from '../support/callback-receiver';
import { databaseState } from '../support/db-state';
import { type Engine, waitForRun } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { input, l, n, oneLlmCall } from '../support/graphs';
import { client } from '../support/http';
import { fakeProviderSettings, startLlmEngine } from '../support/llm-engine';
import { RETENTION_EVERY_MS, retentionScheduleId } from '../../temporal/retention-schedule';
import { WorkflowType } from '../../src/contracts/workflow-names';

type Http = ReturnType<typeof client>;
const DAY_MS = 86_400_000;
const SECRET = 'retention-callback-secret-0123456789';
const MODEL = 'openai/gpt-4o-mini';

/** in(x) → ask (one model call) → gate (a person approves) → out. */
const askThenGate = {
  nodes: [
    input(),
    n('ask', 'SingleLLMCallNode', { llm_info: { model: MODEL, max_tokens: 50 }, user_message: 'say {{in.x}}' }),
    n('gate', 'HumanInterventionNode', { message: 'Approve me' }),
    n('out', 'OutputNode', { output_map: { answer: 'gate.ask.output' } }),
  ],
  links: [l('in', 'ask'), l('ask', 'gate'), l('gate', 'out')],
};

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('e2e: run retention, and deleting a finished run', function () {
  this.timeout(240_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  let receiver: CallbackReceiver;
  let teamB: Http;

  before(async () => {
    // Values over 256 bytes are stored in GridFS under their run: the scan must find them gone too.
    ({ engine, fake } = await startLlmEngine({ SPUR_VALUE_REF_BYTES: '256' }));
    receiver = await startCallbackReceiver();
    const made = await engine.http.post('/access/workspaces/', { name: 'retention-b' });
    assert.equal(made.status, 201, made.text);
    teamB = client(
      engine.api.baseUrl,
      bearer((await memberWithKey(engine.http, made.body.id, 'b-admin', 'admin')).key.key),
    );
    // A workspace's runs use its own provider keys.
    for (const [name, value] of Object.entries(fakeProviderSettings(fake)))
      assert.equal((await teamB.post('/env-mgmt/', { name, value })).status, 200);
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
    await receiver?.close();
  });

  const createWorkflow = async (http: Http, definition: unknown) => {
    const res = await http.post('/wf/', { name: `retention-${Math.random()}`, definition });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  const startRun = async (http: Http, wf: string, body: Record<string, unknown>, headers = {}) => {
    const res = await http.request('POST', `/wf/${wf}/start_run/`, body, headers);
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  const big = (tag: string) => `${tag} ${'x'.repeat(600)}`;
  const approve = async (http: Http, runId: string) => {
    await waitForRun(http, runId, (r) => r.status === 'PAUSED');
    const res = await http.post(`/wf/process_pause_action/${runId}/`, {
      action: 'APPROVE',
      user_id: 'alice',
      inputs: {},
      comments: 'ok',
    });
    assert.equal(res.status, 200, res.text);
    const ended = await waitForRun(http, runId);
    const run = (await http.get(`/run/${runId}/`)).body;
    assert.equal(ended.status, 'COMPLETED', run.message);
    return ended;
  };
  const endOf = async (http: Http, runId: string) => Date.parse((await http.get(`/run/${runId}/`)).body.end_time);
  /** Retention that reaches the runs that ended before `before`, as days from now. */
  const daysReaching = (before: number) => (Date.now() - before) / DAY_MS;

  /** Every document of every collection (GridFS's too) whose JSON names `id` as a whole token, less the audit trail. */
  async function documentsNaming(id: string): Promise<string[]> {
    const db = engine.api.mongo.db;
    if (!db) throw new Error('no database');
    // As ids are written (`R5`, `R5:T2:…`, `run-R5`, `R5/<sha>`, `output_R5.jsonl`, a row `R5-3`), never inside base64 or another id.
    const token = new RegExp(`(?<![A-Za-z0-9+/])${escape(id)}(?![A-Za-z0-9])`);
    const found: string[] = [];
    for (const { name } of await db.listCollections().toArray()) {
      if (AUDIT_COLLECTIONS.includes(name)) continue;
      // A chunk's bytes are content, not a reference: its id and its file's name it.
      const projection = name.endsWith('.chunks') ? { data: 0 } : {};
      for (const doc of await db.collection(name).find({}, { projection }).toArray())
        if (token.test(JSON.stringify(doc))) found.push(`${name}/${JSON.stringify(doc._id)}`);
    }
    return found.sort();
  }
  const collectionsOf = (docs: string[]) => [...new Set(docs.map((d) => d.split('/')[0]))].sort();

  /** Every answer of the usage routes a user reads. */
  async function usageAnswers(): Promise<unknown[]> {
    const today = new Date(new Date().toISOString().slice(0, 10)).toISOString();
    const paths = [
      ...['workflow', 'model', 'day', 'api_key'].map((g) => `/usage/?group_by=${g}`),
      `/usage/?group_by=workflow&from=${encodeURIComponent(today)}`,
      '/usage/workspaces/',
    ];
    return Promise.all(
      paths.map(async (path) => {
        const res = await engine.http.get(path);
        assert.equal(res.status, 200, res.text);
        return { path, body: res.body };
      }),
    );
  }

  it('keeps a daily Temporal Schedule that starts the retention pass, created by the worker at its start', async () => {
    const handle = engine.api.temporal.schedule.getHandle(
      retentionScheduleId(engine.api.config.temporal.workflowIdPrefix),
    );
    const described = await handle.describe();
    assert.deepEqual(
      (described.spec.intervals ?? []).map((i) => Number(i.every)),
      [RETENTION_EVERY_MS],
    );
    assert.equal(RETENTION_EVERY_MS, DAY_MS, 'once a day');
    assert.equal(described.action.type, 'startWorkflow');
    assert.equal(described.action.type === 'startWorkflow' && described.action.workflowType, 'spurRetention');
    assert.equal(described.policies.overlap, 'SKIP');
  });

  it('PUT /wf/{id}/retention/ takes positive days (fractions too) or null; anything else is 422 and changes nothing', async () => {
    const wf = await createWorkflow(engine.http, oneLlmCall(MODEL));
    const initial = await engine.http.get(`/wf/${wf}/retention/`);
    assert.deepEqual(initial.body, { workflow_id: wf, days: null, effective_days: null }, 'kept forever by default');
    const set = await engine.http.put(`/wf/${wf}/retention/`, { days: 0.5 });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body, { workflow_id: wf, days: 0.5, effective_days: 0.5 });
    const before = await databaseState(engine.api.mongo);
    for (const body of [{ days: 0 }, { days: -1 }, { days: '3' }, { days: 1e9 }, {}, { days: 1, keep: 'all' }]) {
      const res = await engine.http.put(`/wf/${wf}/retention/`, body);
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.detail[0].loc[0], 'body', res.text);
    }
    assert.equal((await databaseState(engine.api.mongo)).digest, before.digest, 'the refusals changed nothing');
    const cleared = await engine.http.put(`/wf/${wf}/retention/`, { days: null });
    assert.deepEqual(cleared.body, { workflow_id: wf, days: null, effective_days: null }, 'back to the default');
    assert.equal((await engine.http.get('/wf/S999999/retention/')).status, 404);
  });

  it("another workspace's PUT or GET of our workflow's retention is 404 and changes nothing; a viewer's PUT is 403", async () => {
    const wf = await createWorkflow(engine.http, oneLlmCall(MODEL));
    assert.equal((await engine.http.put(`/wf/${wf}/retention/`, { days: 30 })).status, 200);
    const { key } = await userWithKey(engine.http, 'retention-viewer', 'viewer');
    const viewer = client(engine.api.baseUrl, bearer(key.key));
    const before = await databaseState(engine.api.mongo);
    assert.equal((await teamB.get(`/wf/${wf}/retention/`)).status, 404);
    const put = await teamB.put(`/wf/${wf}/retention/`, { days: 0.000001 });
    assert.equal(put.status, 404, put.text);
    const refused = await viewer.put(`/wf/${wf}/retention/`, { days: 0.000001 });
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.body.detail, /'build'/);
    assert.equal((await databaseState(engine.api.mongo)).digest, before.digest, 'nothing changed');
    assert.equal((await engine.http.get(`/wf/${wf}/retention/`)).body.days, 30);
    assert.equal((await viewer.get(`/wf/${wf}/retention/`)).status, 200, 'a viewer reads it');
  });

  it('the pass deletes the finished runs past their retention with everything they own, keeps the rest, and /usage/ answers the same', async () => {
    const wf = await createWorkflow(engine.http, askThenGate);
    const other = await createWorkflow(engine.http, oneLlmCall(MODEL));
    const wfB = await createWorkflow(teamB, oneLlmCall(MODEL));
    // A budget makes every model call a spend entry of its run, which budgets keep counting.
    const budget = await engine.http.put(`/wf/${wf}/budget/`, { per_month_usd: 1000, on_exceed: 'fail' });
    assert.equal(budget.status, 200, budget.text);

    // Past retention: completed (with a callback and an Idempotency-Key) and cancelled.
    const completed = await startRun(
      engine.http,
      wf,
      { initial_inputs: { in: { x: big('completed') } }, callback: { url: `${receiver.url}/done`, secret: SECRET } },
      { 'Idempotency-Key': 'retention-completed' },
    );
    assert.equal((await approve(engine.http, completed)).status, 'COMPLETED');
    await receiver.waitFor('/done', 1);
    await delivered(completed);
    const canceled = await startRun(engine.http, wf, { initial_inputs: { in: { x: big('canceled') } } });
    await waitForRun(engine.http, canceled, (r) => r.status === 'PAUSED');
    assert.equal((await engine.http.post(`/wf/cancel_workflow/${canceled}/`)).status, 200);
    assert.equal((await waitForRun(engine.http, canceled)).status, 'CANCELED');
    // Old enough, but waiting for a person: kept.
    const paused = await startRun(engine.http, wf, { initial_inputs: { in: { x: 'paused' } } });
    await waitForRun(engine.http, paused, (r) => r.status === 'PAUSED');
    // Another workflow's and another workspace's finished runs, as old.
    const ofOther = await startRun(engine.http, other, { initial_inputs: { in: { x: 'other' } } });
    assert.equal((await waitForRun(engine.http, ofOther)).status, 'COMPLETED');
    const ofB = await startRun(teamB, wfB, { initial_inputs: { in: { x: 'b' } } });
    assert.equal((await waitForRun(teamB, ofB)).status, 'COMPLETED');
    const oldEnd = Math.max(...(await Promise.all([completed, canceled].map((r) => endOf(engine.http, r)))));
    // A gap, so the retention's cutoff falls between the old runs' end and the young one's.
    await new Promise((r) => setTimeout(r, 2000));
    const young = await startRun(engine.http, wf, { initial_inputs: { in: { x: 'young' } } });
    assert.equal((await approve(engine.http, young)).status, 'COMPLETED');
    const youngEnd = await endOf(engine.http, young);

    const named = await documentsNaming(completed);
    for (const kind of ['runs', 'run_tasks', 'run_events', 'pauses', 'usage_records', 'spend_entries'])
      assert.ok(collectionsOf(named).includes(kind), `the scan finds the run in ${kind}: ${named.join(', ')}`);
    for (const kind of ['callback_deliveries', 'idempotency_keys', 'values.files', 'values.chunks'])
      assert.ok(collectionsOf(named).includes(kind), `the scan finds the run in ${kind}: ${named.join(', ')}`);

    const usageBefore = await usageAnswers();
    const spentBefore = await spendOf(wf);
    const cutoff = (oldEnd + youngEnd) / 2;
    for (const [http, id] of [
      [engine.http, wf],
      [teamB, wfB],
    ] as const)
      assert.equal((await http.put(`/wf/${id}/retention/`, { days: daysReaching(cutoff) })).status, 200);

    const pass = await engine.http.post('/runs/retention/prune/');
    assert.equal(pass.status, 200, pass.text);
    assert.deepEqual(pass.body, { deleted_runs: 2, kept_active: 1 });

    for (const gone of [completed, canceled]) {
      assert.deepEqual(await documentsNaming(gone), [], `nothing names ${gone}`);
      assert.equal((await engine.http.get(`/run/${gone}/`)).status, 404);
    }
    for (const [http, kept, status] of [
      [engine.http, young, 'COMPLETED'],
      [engine.http, paused, 'PAUSED'],
      [engine.http, ofOther, 'COMPLETED'],
      [teamB, ofB, 'COMPLETED'],
    ] as const)
      assert.equal((await http.get(`/run/${kept}/`)).body.status, status, `${kept} is kept`);
    assert.deepEqual(await usageAnswers(), usageBefore, 'every usage answer is the same');
    assert.equal(await spendOf(wf), spentBefore, 'the workflow’s budgets count the same spending');

    // The control: B's own pass deletes B's expired run, which A's pass left.
    const passB = await teamB.post('/runs/retention/prune/');
    assert.deepEqual(passB.body, { deleted_runs: 1, kept_active: 0 });
    assert.equal((await teamB.get(`/run/${ofB}/`)).status, 404);
    assert.deepEqual(await usageAnswers(), usageBefore, 'B’s pass changes no answer either');
  });

  /** Polls the run's callback deliveries until the first is delivered (its workflow then writes no more). */
  async function delivered(runId: string): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await engine.http.get(`/run/${runId}/callbacks/`);
      if (res.body?.deliveries?.[0]?.status === 'delivered') return;
      if (Date.now() > deadline) throw new Error(`deliveries of ${runId}: ${res.text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** What the workflow's budgets are measured against: the sum of its spend entries. */
  async function spendOf(workflowId: string): Promise<number> {
    const entries = await engine.api.models.SpendEntry.find({ workflow_id: workflowId }).lean();
    return entries.reduce((sum, e) => sum + e.cost_nano_usd, 0);
  }

  it('DELETE /run/{id}/ erases a finished run now (204, nothing names it); a running one is 409 and goes on', async () => {
    const wf = await createWorkflow(engine.http, oneLlmCall(MODEL));
    const done = await startRun(engine.http, wf, { initial_inputs: { in: { x: big('done') } } });
    assert.equal((await waitForRun(engine.http, done)).status, 'COMPLETED');
    fake.enqueue({ content: JSON.stringify({ output: 'slow' }), delayMs: 30_000 });
    const running = await startRun(engine.http, wf, { initial_inputs: { in: { x: 'slow' } } });
    await waitForRun(engine.http, running, (r) => r.status === 'RUNNING');
    const usageBefore = await usageAnswers();

    const erased = await engine.http.delete(`/run/${done}/`);
    assert.equal(erased.status, 204, erased.text);
    assert.deepEqual(await documentsNaming(done), []);
    assert.equal((await engine.http.get(`/run/${done}/`)).status, 404);
    assert.equal((await engine.http.delete(`/run/${done}/`)).status, 404, 'gone');
    assert.deepEqual(await usageAnswers(), usageBefore, 'its usage still counts');

    const before = await databaseState(engine.api.mongo);
    const refused = await engine.http.delete(`/run/${running}/`);
    assert.equal(refused.status, 409, refused.text);
    assert.match(refused.body.detail, /RUNNING/);
    assert.equal((await databaseState(engine.api.mongo)).digest, before.digest, 'nothing deleted');
    assert.equal((await engine.http.get(`/run/${running}/status/`)).body.status, 'RUNNING', 'it goes on');
    assert.equal((await engine.http.post(`/wf/cancel_workflow/${running}/`)).status, 200);
    assert.equal((await waitForRun(engine.http, running)).status, 'CANCELED');
  });

  it('DELETE /run/{id}/ of a run whose end is saved before its final events waits for them (204 once stored); events that do not come are a 409 that deletes nothing, and the pass keeps the run', async () => {
    const wf = await createWorkflow(engine.http, oneLlmCall(MODEL));
    const { Run, RunEvent } = engine.api.models;
    const head = (seq: number) => JSON.stringify({ seq, status: 'COMPLETED', percentage: 100, tasks: {}, pauses: [] });
    const event = (runId: string, seq: number) =>
      RunEvent.create({ _id: `${runId}:${seq}`, run_id: runId, seq, event: 'run.status', data: '{}', at: new Date() });
    /** A run as its workflow leaves it between the update that ends it and the insert of its events 2 and 3. */
    async function endingRun(seq: number): Promise<string> {
      const runId = `R${seq}`;
      await Run.create({
        _id: runId,
        seq,
        workflow_id: wf,
        status: 'COMPLETED',
        start_time: new Date(Date.now() - 5_000),
        end_time: new Date(Date.now() - 5_000),
        run_type: 'interactive',
        initial_inputs: '{}',
        outputs: null,
        event_head: head(3),
        event_head_before: head(1),
      });
      await event(runId, 1);
      return runId;
    }

    const stored = await endingRun(800_101);
    const deleting = engine.http.delete(`/run/${stored}/`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await event(stored, 2);
    await event(stored, 3);
    assert.equal((await deleting).status, 204);
    assert.deepEqual(await documentsNaming(stored), [], 'its final events went with it');

    const stuck = await endingRun(800_102);
    await event(stuck, 2);
    // The pass reaches it (it ended 5 s ago) and keeps it, counted with the runs still at work.
    assert.equal((await engine.http.put(`/wf/${wf}/retention/`, { days: 1_000 / DAY_MS })).status, 200);
    const pass = await engine.http.post('/runs/retention/prune/');
    assert.equal(pass.status, 200, pass.text);
    assert.ok(pass.body.kept_active >= 1, pass.text);
    assert.equal(await Run.countDocuments({ _id: stuck }), 1, 'the pass kept it');
    const refused = await engine.http.delete(`/run/${stuck}/`);
    assert.equal(refused.status, 409, refused.text);
    assert.match(refused.body.detail, /is still storing its final events/);
    assert.equal(await Run.countDocuments({ _id: stuck }), 1, 'its record is kept');
    assert.equal(await RunEvent.countDocuments({ run_id: stuck }), 2, 'its events are kept');
  });

  it('a batch goes with its rows and its output file: DELETE of a row is 409, of the batch 204, and nothing names either', async () => {
    const wf = await createWorkflow(engine.http, {
      nodes: [input(), n('out', 'OutputNode', { output_map: { answer: 'in.x' } })],
      links: [l('in', 'out')],
    });
    const fd = new FormData();
    fd.append('file', new Blob(['x\na\nb\nc'], { type: 'text/csv' }), 'rows.csv');
    const ds = await engine.http.post('/ds/?name=retention-rows', fd);
    assert.equal(ds.status, 200, ds.text);
    const started = await engine.http.post(`/wf/${wf}/start_batch_run/`, {
      dataset_id: ds.body.id,
      mini_batch_size: 2,
    });
    assert.equal(started.status, 200, started.text);
    const parent = started.body.id as string;
    assert.equal((await waitForRun(engine.http, parent)).status, 'COMPLETED');
    const outputFile = (await engine.http.get(`/run/${parent}/`)).body.output_file_id as string;
    const listed = (await engine.http.get('/run/?parent_only=false&page_size=100')).body as Array<{
      id: string;
      parent_run_id: string | null;
    }>;
    const rows = listed.filter((r) => r.parent_run_id === parent).map((r) => r.id);
    assert.equal(rows.length, 3, JSON.stringify(listed));
    assert.ok(collectionsOf(await documentsNaming(parent)).includes('output_files'), 'the scan finds its output file');

    const before = await databaseState(engine.api.mongo);
    const row = await engine.http.delete(`/run/${rows[0]}/`);
    assert.equal(row.status, 409, row.text);
    assert.match(row.body.detail, new RegExp(`belongs to run ${parent}`));
    assert.equal((await databaseState(engine.api.mongo)).digest, before.digest, 'nothing deleted');

    assert.equal((await engine.http.delete(`/run/${parent}/`)).status, 204);
    for (const id of [parent, ...rows]) assert.deepEqual(await documentsNaming(id), [], `nothing names ${id}`);
    assert.equal((await engine.http.get(`/of/${outputFile}/`)).status, 404, 'its output file is gone');
    assert.deepEqual(await documentsNaming(outputFile), [], 'nor anything of its output file');
    assert.equal((await engine.http.get(`/ds/${ds.body.id}/`)).status, 200, 'the dataset stays');
  });

  it('a run file goes with the last run that may name it: kept while an older run of its workflow remains', async () => {
    const wf = await createWorkflow(engine.http, oneLlmCall(MODEL));
    const fileOf = async (text: string) => {
      const uri = `data:text/plain;base64,${Buffer.from(text).toString('base64')}`;
      const run = await startRun(engine.http, wf, { initial_inputs: { in: { x: uri } } });
      assert.equal((await waitForRun(engine.http, run)).status, 'COMPLETED');
      const path = (await engine.http.get(`/run/${run}/`)).body.initial_inputs.in.x as string;
      assert.match(path, new RegExp(`^run_files/${wf}/[0-9a-f]{16}\\.txt$`));
      return { run, url: `/files/${path}` };
    };
    const first = await fileOf('first file');
    const second = await fileOf('second file');
    // An hour on: both files were last stored long ago, and the second run started before either.
    const db = engine.api.mongo.db;
    if (!db) throw new Error('no database');
    const hourAgo = new Date(Date.now() - 3_600_000);
    await db
      .collection('run_files.files')
      .updateMany({ 'metadata.workflow_id': wf }, { $set: { uploadDate: hourAgo } });
    await db
      .collection('runs')
      .updateOne({ _id: second.run as never }, { $set: { start_time: new Date(Date.now() - 7_200_000) } });

    assert.equal((await engine.http.delete(`/run/${first.run}/`)).status, 204);
    for (const file of [first, second])
      assert.equal((await engine.http.get(file.url)).status, 200, `${file.url} may be named by the older run`);
    assert.equal((await engine.http.delete(`/run/${second.run}/`)).status, 204);
    for (const file of [first, second])
      assert.equal((await engine.http.get(file.url)).status, 404, `${file.url} went with the last run`);
  });

  it("another workspace's DELETE of our run is 404, an operator for an id 404, a viewer's DELETE and a builder's pass 403, and none changes anything", async () => {
    const wf = await createWorkflow(engine.http, oneLlmCall(MODEL));
    const run = await startRun(engine.http, wf, { initial_inputs: { in: { x: 'mine' } } });
    assert.equal((await waitForRun(engine.http, run)).status, 'COMPLETED');
    const viewer = client(engine.api.baseUrl, bearer((await userWithKey(engine.http, 'del-viewer', 'viewer')).key.key));
    const builder = client(
      engine.api.baseUrl,
      bearer((await userWithKey(engine.http, 'del-builder', 'builder')).key.key),
    );
    assert.equal((await engine.http.put(`/wf/${wf}/retention/`, { days: 0.000001 })).status, 200);
    const before = await databaseState(engine.api.mongo);

    const fromB = await teamB.delete(`/run/${run}/`);
    assert.equal(fromB.status, 404, fromB.text);
    assert.doesNotMatch(fromB.text, new RegExp(escape(run)));
    const byViewer = await viewer.delete(`/run/${run}/`);
    assert.equal(byViewer.status, 403, byViewer.text);
    assert.match(byViewer.body.detail, /'build'/);
    const byBuilder = await builder.post('/runs/retention/prune/');
    assert.equal(byBuilder.status, 403, byBuilder.text);
    assert.match(byBuilder.body.detail, /'retention\.prune'/);
    const passB = await teamB.post('/runs/retention/prune/');
    assert.deepEqual(passB.body, { deleted_runs: 0, kept_active: 0 }, "B's pass finds none of ours");
    // A query operator where an id goes names no run, not every run.
    for (const id of ['{"$ne":null}', '{"$gt":""}'])
      assert.equal((await engine.http.delete(`/run/${encodeURIComponent(id)}/`)).status, 404, id);

    assert.equal((await databaseState(engine.api.mongo)).digest, before.digest, 'nothing changed');
    assert.equal((await engine.http.get(`/run/${run}/`)).body.status, 'COMPLETED');
  });

  it("the schedule's pass looks at every workspace, a page at a time, and deletes each run inside its own", async () => {
    const finished = async (http: Http) => {
      const wf = await createWorkflow(http, oneLlmCall(MODEL));
      const run = await startRun(http, wf, { initial_inputs: { in: { x: 'fleet' } } });
      assert.equal((await waitForRun(http, run)).status, 'COMPLETED');
      return { http, wf, run };
    };
    const ofA = await finished(engine.http);
    const ofB = await finished(teamB);
    for (const { http, wf } of [ofA, ofB])
      assert.equal((await http.put(`/wf/${wf}/retention/`, { days: 1e-9 })).status, 200);
    const byWorkspace = async () => (await engine.http.get('/usage/workspaces/')).body;
    const usageBefore = await byWorkspace();

    // What the daily Schedule starts, started now, in pages of one run.
    const tally = await engine.api.temporal.workflow.execute(WorkflowType.spurRetention, {
      workflowId: `${engine.api.config.temporal.workflowIdPrefix}retention-now`,
      taskQueue: engine.api.config.temporal.taskQueue,
      args: [{ pageSize: 1 }],
    });
    assert.ok(tally.deleted_runs >= 2, JSON.stringify(tally));
    for (const { http, run } of [ofA, ofB]) {
      assert.equal((await http.get(`/run/${run}/`)).status, 404, `${run} deleted`);
      assert.deepEqual(await documentsNaming(run), [], `nothing names ${run}`);
    }
    assert.deepEqual(await byWorkspace(), usageBefore, "each workspace's usage is its own, as before");
  });
});
