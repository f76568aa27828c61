import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { type Engine, isFinal, startEngine, waitForRun } from '../support/engine';
import { client } from '../support/http';
import { input, l, n } from '../support/graphs';
import { keyedPauseActionLeftUnanswered, keyedRunLeftUnstarted } from '../support/half-started-runs';
import { pauseActionSignal, pauseRecordId } from '../../src/contracts/pauses';
import { runWorkflowId } from '../../src/contracts/workflow-names';

type Http = Engine['http'];

/** in(x) → out(x): a run that needs no sandbox. */
const echo = { nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })], links: [l('in', 'out')] };

/** in(x) → py (sleeps a second, y = x + "!") → out: a blocking run that is still going when its replay arrives. */
const slowExclaim = {
  nodes: [
    input(),
    n('py', 'PythonFuncNode', {
      code: 'import time\ntime.sleep(1)\nreturn {"y": input_model["in"]["x"] + "!"}',
      output_schema: { y: 'string' },
    }),
    n('out', 'OutputNode', { output_map: { y: 'py.y' } }),
  ],
  links: [l('in', 'py'), l('py', 'out')],
};

/** in → gate (a human pause) → out. */
const gated = {
  nodes: [input(), n('gate', 'HumanInterventionNode'), n('out', 'OutputNode')],
  links: [l('in', 'gate'), l('gate', 'out')],
};

/** in → gate → py (sleeps 3 s) → out: a run still open after its pause was decided. */
const gatedThenSlow = {
  nodes: [
    input(),
    n('gate', 'HumanInterventionNode'),
    n('py', 'PythonFuncNode', {
      code: 'import time\ntime.sleep(3)\nreturn {"y": "done"}',
      output_schema: { y: 'string' },
    }),
    n('out', 'OutputNode', { output_map: { y: 'py.y' } }),
  ],
  links: [l('in', 'gate'), l('gate', 'py'), l('py', 'out')],
};

let keyCounter = 0;
const newKey = () => `key-${process.pid}-${Date.now()}-${++keyCounter}`;
const keyed = (key: string, extra: Record<string, string> = {}) => ({ 'Idempotency-Key': key, ...extra });
const replayed = (res: { headers: Headers }) => res.headers.get('idempotent-replayed') === 'true';

async function createWorkflow(http: Http, definition: unknown): Promise<string> {
  const res = await http.post('/wf/', { name: `idem-${newKey()}`, definition });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id as string;
}

async function runsOf(http: Http, workflowId: string): Promise<Array<{ id: string; status: string }>> {
  const res = await http.get(`/wf/${workflowId}/runs/?page_size=100`);
  assert.equal(res.status, 200);
  return res.body;
}

describe('e2e: Idempotency-Key on run submissions and pause actions', function () {
  this.timeout(180_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(() => engine?.close());

  const startRun = (workflowId: string, key: string, x = 'a') =>
    engine.http.request('POST', `/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x } } }, keyed(key));

  it('start_run: the same key and body answer the first answer (Idempotent-Replayed: true); only one run exists', async () => {
    const wf = await createWorkflow(engine.http, echo);
    const key = newKey();
    const first = await startRun(wf, key);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.headers.get('idempotent-replayed'), null);
    await waitForRun(engine.http, first.body.id);
    const again = await startRun(wf, key);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.ok(replayed(again));
    // The first request's answer, as it was (the run as created), not the run as it is now.
    assert.deepEqual(again.body, first.body);
    assert.deepEqual(
      (await runsOf(engine.http, wf)).map((r) => r.id),
      [first.body.id],
    );
    assert.equal((await waitForRun(engine.http, first.body.id)).status, 'COMPLETED');
  });

  it('start_run: the same key with another body is refused (422) naming the key, and starts nothing', async () => {
    const wf = await createWorkflow(engine.http, echo);
    const key = newKey();
    const first = await startRun(wf, key, 'a');
    assert.equal(first.status, 200);
    const other = await startRun(wf, key, 'b');
    assert.equal(other.status, 422, JSON.stringify(other.body));
    assert.equal(other.body.detail[0].type, 'idempotency_key_reused');
    assert.deepEqual(other.body.detail[0].loc, ['header', 'idempotency-key']);
    assert.ok(other.body.detail[0].msg.includes(key), other.body.detail[0].msg);
    // Another run_type is another request too.
    const otherType = await engine.http.request(
      'POST',
      `/wf/${wf}/start_run/?run_type=non_blocking`,
      { initial_inputs: { in: { x: 'a' } } },
      keyed(key),
    );
    assert.equal(otherType.status, 422);
    assert.equal((await runsOf(engine.http, wf)).length, 1);
  });

  it('start_run: concurrent requests with one key start one run, and all answer it', async () => {
    const wf = await createWorkflow(engine.http, echo);
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 6 }, () => startRun(wf, key)));
    for (const res of answers) assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(
      new Set(answers.map((r) => r.body.id)).size,
      1,
      `one run id: ${answers.map((r) => r.body.id).join(', ')}`,
    );
    assert.equal(answers.filter((r) => !replayed(r)).length, 1, 'exactly one answer is the original');
    for (const res of answers) assert.deepEqual(res.body, answers[0]?.body);
    const runs = await runsOf(engine.http, wf);
    assert.deepEqual(
      runs.map((r) => r.id),
      [answers[0]?.body.id],
    );
    assert.equal((await waitForRun(engine.http, runs[0]!.id)).status, 'COMPLETED');
  });

  it('run (blocking): a replay while the run goes on waits for the same run and answers its outputs', async () => {
    const wf = await createWorkflow(engine.http, slowExclaim);
    const key = newKey();
    const send = () =>
      engine.http.request('POST', `/wf/${wf}/run/`, { initial_inputs: { in: { x: 'hi' } } }, keyed(key));
    const [first, second] = await Promise.all([send(), send()]);
    for (const res of [first, second]) {
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.out, { y: 'hi!' });
    }
    assert.equal([first, second].filter(replayed).length, 1);
    // Once it has ended, a replay answers its result at once.
    const later = await send();
    assert.equal(later.status, 200);
    assert.ok(replayed(later));
    assert.deepEqual(later.body, first.body);
    assert.equal((await runsOf(engine.http, wf)).length, 1);
  });

  it('process_pause_action: a replay of the decision answers the first answer instead of "not paused"', async () => {
    const wf = await createWorkflow(engine.http, gated);
    const started = await engine.http.post(`/wf/${wf}/start_run/`, { initial_inputs: { in: { x: 'p' } } });
    const run = await waitForRun(engine.http, started.body.id, (r) => r.status === 'PAUSED', 60_000);
    const key = newKey();
    const decision = { action: 'APPROVE', user_id: 'alice', inputs: { note: 'ok' }, comments: 'fine' };
    const act = (body: Record<string, unknown>, headers: Record<string, string> = keyed(key)) =>
      engine.http.request('POST', `/wf/process_pause_action/${run.id}/`, body, headers);
    const first = await act(decision);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const done = await waitForRun(engine.http, run.id);
    assert.equal(done.status, 'COMPLETED');

    // The same decision, its fields in another order: the same request.
    const again = await engine.http.request(
      'POST',
      `/wf/process_pause_action/${run.id}/`,
      { raw: JSON.stringify({ comments: 'fine', inputs: { note: 'ok' }, user_id: 'alice', action: 'APPROVE' }) },
      keyed(key),
    );
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.ok(replayed(again));
    assert.deepEqual(again.body, first.body);
    // Without the key, the same decision is a second action: PySpur's refusal.
    assert.equal((await act(decision, {})).status, 400);
    // Another decision under the same key is refused naming the key.
    const declined = await act({ ...decision, action: 'DECLINE' });
    assert.equal(declined.status, 422);
    assert.ok(declined.body.detail[0].msg.includes(key));
    const history = (await engine.http.get(`/wf/pause_history/${run.id}/`)).body;
    assert.deepEqual([history.length, history[0].resume_action, history[0].resume_user_id], [1, 'APPROVE', 'alice']);
  });

  it('process_pause_action: a retry whose first request applied the decision but answered an error (its key released) answers 200, not "not paused"', async () => {
    const wf = await createWorkflow(engine.http, gated);
    const started = await engine.http.post(`/wf/${wf}/start_run/`, { initial_inputs: { in: { x: 'r' } } });
    const run = await waitForRun(engine.http, started.body.id, (r) => r.status === 'PAUSED', 60_000);
    const key = newKey();
    const decision = { action: 'APPROVE', user_id: 'bob', inputs: { note: 'ok' }, comments: '' };
    const act = () => engine.http.request('POST', `/wf/process_pause_action/${run.id}/`, decision, keyed(key));
    assert.equal((await act()).status, 200);
    assert.equal((await waitForRun(engine.http, run.id)).status, 'COMPLETED');
    // What a first request leaves when it applied the decision and then failed (a 503 while reading
    // the run back): a released key. Its client sends the request again with the same key.
    await engine.api.models.IdempotencyKey.deleteMany({ key });
    const retry = await act();
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(retry.body.status, 'COMPLETED');
    const history = (await engine.http.get(`/wf/pause_history/${run.id}/`)).body;
    assert.deepEqual([history.length, history[0].resume_user_id], [1, 'bob'], 'the decision was applied once');
    // Another user's action is still a second action: refused.
    const other = await engine.http.request(
      'POST',
      `/wf/process_pause_action/${run.id}/`,
      { ...decision, user_id: 'carol' },
      keyed(newKey()),
    );
    assert.equal(other.status, 400);
  });

  it('process_pause_action: a retry whose first request went as a signal answers 200 while the database does not show the decision yet', async () => {
    const wf = await createWorkflow(engine.http, gatedThenSlow);
    const started = await engine.http.post(`/wf/${wf}/start_run/`, { initial_inputs: { in: { x: 's' } } });
    const runId = started.body.id as string;
    await waitForRun(engine.http, runId, (r) => r.status === 'PAUSED', 60_000);
    // The first request's Update found no worker in time, so it sent the decision as a signal and
    // then failed (a 503 reading the run back): its key is released, the workflow has the decision.
    const decision = { action: 'APPROVE', user_id: 'dana', inputs: {}, comments: '' } as const;
    const pauseId = pauseRecordId(runId, 'gate', 1);
    const handle = engine.api.temporal.workflow.getHandle(runWorkflowId(runId, engine.api.env.SPUR_WORKFLOW_ID_PREFIX));
    await handle.signal(pauseActionSignal, { action: 'APPROVE', userId: 'dana', inputs: {}, comments: '', pauseId });
    await waitForRun(
      engine.http,
      runId,
      (r: any) => r.tasks.some((t: any) => t.node_id === 'py' && t.status === 'RUNNING'),
      60_000,
    );
    // The run's next save (which records the resolution) has not reached the database yet.
    await engine.api.models.Pause.updateOne(
      { _id: pauseId },
      { $set: { resume_time: null, resume_action: null, resume_user_id: null } },
    );
    const act = (body: Record<string, unknown>) =>
      engine.http.request('POST', `/wf/process_pause_action/${runId}/`, body, keyed(newKey()));
    const retry = await act(decision);
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal(retry.body.id, runId);
    // Another person's decision is a second action, refused as PySpur does.
    const other = await act({ ...decision, user_id: 'erin' });
    assert.deepEqual([other.status, other.body.detail], [400, 'Run is not in a paused state']);
    const done = await waitForRun(engine.http, runId);
    assert.deepEqual([done.status, done.outputs?.out?.y], ['COMPLETED', 'done']);
  });

  it('a replay starts the run of a first request whose api died between claiming the key and starting the run', async () => {
    const wf = await createWorkflow(engine.http, echo);
    const key = newKey();
    const runId = await keyedRunLeftUnstarted(engine, wf, key, { in: { x: 'late' } }, true);
    assert.equal((await engine.http.get(`/run/${runId}/status/`)).body.status, 'PENDING');
    // This engine has no reconciler: only the replay can start it (after waiting for the first request).
    const replay = await startRun(wf, key, 'late');
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    assert.ok(replayed(replay));
    assert.equal(replay.body.id, runId);
    const done = await waitForRun(engine.http, runId);
    assert.equal(done.status, 'COMPLETED');
    assert.deepEqual(
      (await runsOf(engine.http, wf)).map((r) => r.id),
      [runId],
    );
    // From now on its replays answer at once with what the replay answered.
    const again = await startRun(wf, key, 'late');
    assert.deepEqual([again.body.id, replayed(again)], [runId, true]);
  });

  it('a replay of a pause action whose api died unanswered applies the decision once, whether or not it had reached the workflow', async () => {
    const wf = await createWorkflow(engine.http, {
      ...gated,
      nodes: [...gated.nodes, n('gate2', 'HumanInterventionNode'), n('out2', 'OutputNode')],
      links: [l('in', 'gate'), l('gate', 'out'), l('out', 'gate2'), l('gate2', 'out2')],
    });
    const started = await engine.http.post(`/wf/${wf}/start_run/`, { initial_inputs: { in: { x: 'p' } } });
    const runId = started.body.id as string;
    const pausedAt = async (node: string) =>
      waitForRun(
        engine.http,
        runId,
        (r: any) => r.status === 'PAUSED' && r.tasks.some((t: any) => t.node_id === node && t.status === 'PAUSED'),
        60_000,
      );
    const decision = { action: 'APPROVE', user_id: 'alice', inputs: {}, comments: null };
    const replay = (key: string) =>
      engine.http.request('POST', `/wf/process_pause_action/${runId}/`, decision, keyed(key));

    // Reached the workflow, then the api died: the replay answers without acting twice.
    await pausedAt('gate');
    const appliedKey = newKey();
    await keyedPauseActionLeftUnanswered(engine, runId, appliedKey, decision, true);
    await pausedAt('gate2');
    const first = await replay(appliedKey);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.ok(replayed(first));
    assert.equal(first.body.id, runId);
    assert.equal(
      (await engine.http.get(`/run/${runId}/status/`)).body.status,
      'PAUSED',
      'the second pause is still open',
    );

    // Died before the decision reached the workflow: the replay applies it.
    const lostKey = newKey();
    await keyedPauseActionLeftUnanswered(engine, runId, lostKey, decision, false);
    const second = await replay(lostKey);
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.ok(replayed(second));
    assert.equal((await waitForRun(engine.http, runId)).status, 'COMPLETED');
    const history = (await engine.http.get(`/wf/pause_history/${runId}/`)).body as Array<{
      node_id: string;
      resume_action: string;
    }>;
    assert.deepEqual(history.map((p) => [p.node_id, p.resume_action]).sort(), [
      ['gate', 'APPROVE'],
      ['gate2', 'APPROVE'],
    ]);

    // The decision ended the run before the api died: its workflow is closed, the pause record tells.
    const endedKey = newKey();
    const single = (
      await engine.http.post(`/wf/${await createWorkflow(engine.http, gated)}/start_run/`, {
        initial_inputs: { in: { x: 'q' } },
      })
    ).body.id as string;
    await waitForRun(engine.http, single, (r) => r.status === 'PAUSED', 60_000);
    await keyedPauseActionLeftUnanswered(engine, single, endedKey, decision, true);
    assert.equal((await waitForRun(engine.http, single)).status, 'COMPLETED');
    const ended = await engine.http.request('POST', `/wf/process_pause_action/${single}/`, decision, keyed(endedKey));
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    assert.ok(replayed(ended));
    assert.equal(ended.body.status, 'COMPLETED');
  });

  it('scopes a key per route and per workflow: the same key elsewhere starts its own run', async () => {
    const [wfA, wfB] = [await createWorkflow(engine.http, echo), await createWorkflow(engine.http, echo)];
    const key = newKey();
    const a = await startRun(wfA, key);
    const b = await startRun(wfB, key);
    const blocking = await engine.http.request(
      'POST',
      `/wf/${wfA}/run/`,
      { initial_inputs: { in: { x: 'a' } } },
      keyed(key),
    );
    for (const res of [a, b, blocking]) {
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.ok(!replayed(res));
    }
    assert.notEqual(a.body.id, b.body.id);
    assert.equal((await runsOf(engine.http, wfA)).length, 2, 'start_run and run of workflow A each have their run');
    assert.equal((await runsOf(engine.http, wfB)).length, 1);
  });

  it('start_batch_run: the same key answers the same batch', async () => {
    const wf = await createWorkflow(engine.http, echo);
    const fd = new FormData();
    fd.append('file', new Blob(['x\n1\n2\n3'], { type: 'text/csv' }), 'idem.csv');
    const ds = (await engine.http.post(`/ds/?name=idem-${newKey()}`, fd)).body;
    const key = newKey();
    const send = () =>
      engine.http.request('POST', `/wf/${wf}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 2 }, keyed(key));
    const [first, second] = await Promise.all([send(), send()]);
    for (const res of [first, second]) assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(first.body.id, second.body.id);
    assert.equal([first, second].filter(replayed).length, 1);
    const batches = (await engine.http.get('/run/?run_type=batch&page_size=100')).body.filter(
      (r: { workflow_id: string }) => r.workflow_id === wf,
    );
    assert.equal(batches.length, 1);
    assert.ok(isFinal(await waitForRun(engine.http, first.body.id, isFinal, 60_000)));
  });

  it('an expired key starts a new run', async () => {
    const wf = await createWorkflow(engine.http, echo);
    const key = newKey();
    const first = await startRun(wf, key);
    assert.equal(first.status, 200);
    // Age the record past its retention, as if 24 h had gone by.
    await engine.api.models.IdempotencyKey.updateMany({ key }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    const later = await startRun(wf, key);
    assert.equal(later.status, 200);
    assert.ok(!replayed(later));
    assert.notEqual(later.body.id, first.body.id);
    assert.equal((await runsOf(engine.http, wf)).length, 2);
  });

  it('rejects a malformed key (422) and documents the header in OpenAPI', async () => {
    const wf = await createWorkflow(engine.http, echo);
    const long = await startRun(wf, 'k'.repeat(256));
    assert.equal(long.status, 422);
    assert.deepEqual(long.body.detail[0].loc, ['header', 'idempotency-key']);
    assert.equal((await runsOf(engine.http, wf)).length, 0);

    const doc = (await engine.http.get('/openapi.json')).body;
    for (const path of [
      '/wf/{workflow_id}/run/',
      '/wf/{workflow_id}/start_run/',
      '/wf/{workflow_id}/start_batch_run/',
      '/wf/process_pause_action/{run_id}/',
    ]) {
      const op = doc.paths[path].post;
      const header = op.parameters.find(
        (p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key',
      );
      assert.ok(header, `${path} documents Idempotency-Key`);
      assert.match(header.description, /same key/);
      assert.ok(op.responses['200'].headers['Idempotent-Replayed'], `${path} documents Idempotent-Replayed`);
    }
  });
});

describe('e2e: Idempotency-Key retention and callers', function () {
  this.timeout(120_000);
  const keys = ['caller-one-key', 'caller-two-key'];
  const ttlSeconds = 4;
  let engine: Engine;
  before(async () => {
    engine = await startEngine({
      SPUR_API_KEY_HASHES: keys.map(hashApiKey).join(','),
      SPUR_IDEMPOTENCY_TTL_SECONDS: String(ttlSeconds),
    });
  });
  after(() => engine?.close());

  it('scopes keys per API key, and forgets them after SPUR_IDEMPOTENCY_TTL_SECONDS', async () => {
    const http = client(engine.api.baseUrl);
    const auth = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });
    const wf = (await http.request('POST', '/wf/', { name: 'idem callers', definition: echo }, auth(keys[0]!))).body
      .id as string;
    const key = newKey();
    const start = (apiKey: string) =>
      http.request('POST', `/wf/${wf}/start_run/`, { initial_inputs: { in: { x: 'a' } } }, keyed(key, auth(apiKey)));
    const one = await start(keys[0]!);
    const two = await start(keys[1]!);
    assert.equal(one.status, 200, JSON.stringify(one.body));
    assert.equal(two.status, 200, JSON.stringify(two.body));
    assert.notEqual(one.body.id, two.body.id, 'two callers, two runs');
    assert.ok(!replayed(two));

    // Past the retention (counted from the first request), the key starts a new run.
    const since = Date.parse(one.headers.get('date') ?? '') || Date.now();
    while (Date.now() < since + (ttlSeconds + 1) * 1000) await new Promise((r) => setTimeout(r, 250));
    const later = await start(keys[0]!);
    assert.equal(later.status, 200);
    assert.ok(!replayed(later));
    assert.ok(![one.body.id, two.body.id].includes(later.body.id));
  });
});
