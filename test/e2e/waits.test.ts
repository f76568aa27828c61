import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { isFinal, type SplitEngine, startSplitEngine, waitForRun } from '../support/engine';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { CREDENTIALS, setEnv } from '../support/integration-runs';
import { input, l, n } from '../support/graphs';
import { pollDelays } from '../support/poll';
import { untilTimerRecorded } from '../support/run-history';
import { startWorker } from '../support/worker';

/** The base the worker builds callback URLs on: from configuration, not from any request. */
const PUBLIC_URL = 'https://spur.example.test';

type Task = {
  id: string;
  node_id: string;
  status: string;
  outputs: any;
  error: string | null;
  end_time: string | null;
  waiting_for: string | null;
  waiting_reason: string | null;
  waiting_until: string | null;
};
type Run = { id: string; status: string; message: string | null; tasks: Task[] };

describe('WaitNode and WaitForCallbackNode', function () {
  this.timeout(240_000);
  let engine: SplitEngine;
  let fake: FakeServices;

  before(async () => {
    engine = await startSplitEngine({ SPUR_PUBLIC_URL: PUBLIC_URL, SPUR_INBOUND_CALLBACK_MAX_BYTES: '2048' });
    fake = await startFakeServices();
    await setEnv(engine, { SLACK_API_BASE: fake.base('slack'), SLACK_BOT_TOKEN: CREDENTIALS.SLACK_BOT_TOKEN! });
  });
  after(async () => {
    await fake?.close();
    await engine?.close();
  });

  const http = () => engine.http;
  const taskOf = (run: Run, id: string) => run.tasks.find((t) => t.node_id === id) as Task;

  async function startRun(definition: unknown, x = 'hello'): Promise<string> {
    const wf = await http().post('/wf/', { name: `waits-${Math.random()}`, definition });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    const run = await http().post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x } } });
    assert.equal(run.status, 200, JSON.stringify(run.body));
    return run.body.id;
  }

  async function runOf(runId: string): Promise<Run> {
    return (await http().get(`/run/${runId}/`)).body as Run;
  }

  /** Polls the run until `done` holds (generous: the suite shares two cores). */
  async function until(runId: string, done: (run: Run) => boolean, what: string, timeoutMs = 90_000): Promise<Run> {
    const deadline = Date.now() + timeoutMs;
    const pause = pollDelays();
    for (;;) {
      const run = await runOf(runId);
      if (done(run)) return run;
      if (Date.now() > deadline) throw new Error(`${what}: run ${runId} is ${JSON.stringify(run).slice(0, 1500)}`);
      await pause();
    }
  }

  const waitingTimer = (run: Run, id: string) => taskOf(run, id)?.waiting_reason === 'timer';

  it('a WaitNode of 5 s shows RUNNING with its wake-up time, survives a worker kill -9 and ends no earlier than it', async () => {
    const runId = await startRun({
      nodes: [input(), n('wait', 'WaitNode', { seconds: 5 }), n('out', 'OutputNode')],
      links: [l('in', 'wait'), l('wait', 'out')],
    });
    // The task and the run's status are two writes of one save: wait for both.
    const waiting = await until(runId, (r) => waitingTimer(r, 'wait') && r.status === 'RUNNING', 'the wait shows');
    const task = taskOf(waiting, 'wait');
    assert.equal(waiting.status, 'RUNNING');
    assert.equal(task.status, 'RUNNING');
    assert.equal(task.waiting_for, 'timer');
    const wakeAt = Date.parse(task.waiting_until as string);
    assert.ok(Number.isFinite(wakeAt), `waiting_until ${task.waiting_until}`);

    // Killed during the wait, not while the workflow task that starts it is still to be recorded
    // (a worker lost then starts the wait again: integrations.md, Waits and callbacks).
    await untilTimerRecorded(engine, runId);
    engine.worker.process.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 6000)); // the wake-up time passes with no worker at all
    assert.equal((await runOf(runId)).status, 'RUNNING');
    engine.worker = await startWorker(engine.api.env);

    const done = await until(runId, (r) => r.status === 'COMPLETED', 'the run completes after the new worker starts');
    const ended = taskOf(done, 'wait');
    assert.equal(ended.status, 'COMPLETED');
    assert.ok(Date.parse(ended.end_time as string) >= wakeAt, `ended ${ended.end_time}, wake-up ${task.waiting_until}`);
    assert.equal(ended.waiting_reason, null);
    assert.deepEqual(taskOf(done, 'out').outputs, { wait: { in: { x: 'hello' } } });
    // The stream told the wait: a finished run's stream replays every event and ends.
    const stream = (await http().get(`/run/${runId}/events/`)).text;
    const told = stream
      .split('\n\n')
      .filter((e) => e.includes('event: task.waiting'))
      .map((e) => JSON.parse(/data: (.*)/.exec(e)?.[1] ?? '{}'));
    assert.deepEqual(told, [
      { run_id: runId, node_id: 'wait', task_id: task.id, until: task.waiting_until, reason: 'timer' },
    ]);
  });

  it('cancel during a wait ends the run CANCELED at once, and its timer never completes it', async () => {
    const runId = await startRun({
      nodes: [input(), n('wait', 'WaitNode', { seconds: 4 }), n('out', 'OutputNode')],
      links: [l('in', 'wait'), l('wait', 'out')],
    });
    await until(runId, (r) => waitingTimer(r, 'wait'), 'the wait shows');
    assert.equal((await http().post(`/wf/cancel_workflow/${runId}/`, {})).status, 200);
    const canceled = await until(runId, (r) => r.status === 'CANCELED', 'the run is canceled', 30_000);
    assert.equal(taskOf(canceled, 'wait').status, 'CANCELED');
    await new Promise((r) => setTimeout(r, 7000)); // past the wake-up time
    const later = await runOf(runId);
    assert.equal(later.status, 'CANCELED');
    assert.equal(taskOf(later, 'wait').status, 'CANCELED');
    assert.notEqual(taskOf(later, 'out')?.status, 'COMPLETED');
  });

  it("a WaitNode's until is rendered from its input; a time that is not one fails the node naming it", async () => {
    const at = new Date(Date.now() + 3000).toISOString();
    const runId = await startRun(
      { nodes: [input(), n('wait', 'WaitNode', { until: '{{ in.x }}' })], links: [l('in', 'wait')] },
      at,
    );
    const waiting = await until(runId, (r) => waitingTimer(r, 'wait') || isFinal(r), 'the wait shows');
    assert.equal(taskOf(waiting, 'wait')?.waiting_until, at, JSON.stringify(waiting));
    const done = await waitForRun(http(), runId, undefined, 90_000);
    assert.equal(done.status, 'COMPLETED');
    assert.ok(Date.parse(taskOf(await runOf(runId), 'wait').end_time as string) >= Date.parse(at));

    const bad = await startRun(
      { nodes: [input(), n('wait', 'WaitNode', { until: '{{ in.x }}' })], links: [l('in', 'wait')] },
      'tomorrow',
    );
    const failed = await until(bad, (r) => r.status === 'FAILED' && taskOf(r, 'wait').status === 'FAILED', 'fails');
    assert.match(taskOf(failed, 'wait').error as string, /until rendered 'tomorrow', not an ISO 8601 time/);

    const far = await startRun(
      { nodes: [input(), n('wait', 'WaitNode', { until: '{{ in.x }}' })], links: [l('in', 'wait')] },
      '2999-01-01T00:00:00Z',
    );
    const refused = await until(far, (r) => r.status === 'FAILED' && taskOf(r, 'wait').status === 'FAILED', 'fails');
    assert.match(taskOf(refused, 'wait').error as string, /until 2999-01-01T00:00:00Z is more than 365 days ahead/);

    const past = await startRun(
      { nodes: [input(), n('wait', 'WaitNode', { until: '{{ in.x }}' })], links: [l('in', 'wait')] },
      '2001-01-01T00:00:00+02:00',
    );
    assert.equal((await waitForRun(http(), past, undefined, 90_000)).status, 'COMPLETED');
  });

  it('a partial run passes a WaitNode its input through, unwaited, and leaves a WaitForCallbackNode out', async () => {
    const definition = {
      nodes: [input(), n('wait', 'WaitNode', { seconds: 3600 }), n('cb', 'WaitForCallbackNode')],
      links: [l('in', 'wait'), l('in', 'cb')],
    };
    const wf = (await http().post('/wf/', { name: `partial-${Math.random()}`, definition })).body;
    const partial = (node_id: string) =>
      http().post(`/wf/${wf.id}/run_partial/`, { node_id, initial_inputs: { in: { x: 'a' } }, partial_outputs: {} });
    const waited = await partial('wait');
    assert.equal(waited.status, 200, waited.text);
    assert.deepEqual(waited.body.wait, { in: { x: 'a' } });
    const called = await partial('cb');
    assert.equal(called.status, 200, called.text);
    assert.equal('cb' in called.body, false, called.text);
  });

  /** in → notify (Slack, the URL in its message) and in → cb (the callback) → out. */
  const callbackGraph = (cb: Record<string, unknown>) => ({
    nodes: [
      input(),
      n('notify', 'SlackNotifyNode', { channel: 'C1', message: 'Call me back: {{ callback_url("cb") }}' }),
      n('cb', 'WaitForCallbackNode', cb),
      n('out', 'OutputNode'),
    ],
    links: [l('in', 'notify'), l('in', 'cb'), l('cb', 'out')],
  });

  /** The URL the run handed to the fake service (Slack), once it arrives. */
  async function urlSentBy(runId: string, before: number): Promise<string> {
    const pause = pollDelays();
    const deadline = Date.now() + 90_000;
    for (;;) {
      const sent = fake
        .to('slack')
        .slice(before)
        .map((r) => String(r.body?.text ?? ''));
      const url = sent.map((t) => /Call me back: (\S+)/.exec(t)?.[1]).find(Boolean);
      if (url) return url;
      if (Date.now() > deadline) throw new Error(`no callback URL reached the fake service for ${runId}`);
      await pause();
    }
  }

  /** Posts to a callback URL the run handed out, at the api under test (the URL's base is the public one). */
  async function call(url: string, body: string, headers: Record<string, string> = {}) {
    assert.ok(url.startsWith(`${PUBLIC_URL}/api/callbacks/`), url);
    const path = url.slice(PUBLIC_URL.length + '/api'.length);
    const res = await fetch(`${engine.api.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  }

  const waitingCallback = (r: Run) => taskOf(r, 'cb')?.waiting_reason === 'callback';

  it("a WaitForCallbackNode's URL goes out through a node of the run; the call 3 s later completes it with its body; a second call is 410", async () => {
    const before = fake.to('slack').length;
    const runId = await startRun(callbackGraph({ timeout_seconds: 120 }));
    const url = await urlSentBy(runId, before);
    const waiting = await until(runId, (r) => waitingCallback(r) && r.status === 'RUNNING', 'the callback wait shows');
    assert.equal(waiting.status, 'RUNNING');
    assert.ok(Date.parse(taskOf(waiting, 'cb').waiting_until as string) > Date.now());
    await new Promise((r) => setTimeout(r, 3000)); // the outside system answers later
    const first = await call(url, JSON.stringify({ approved: true, note: 'ok' }));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const done = await until(runId, (r) => r.status === 'COMPLETED', 'the run completes');
    assert.deepEqual(taskOf(done, 'cb').outputs, { approved: true, note: 'ok' });
    assert.deepEqual(taskOf(done, 'out').outputs, { cb: { approved: true, note: 'ok' } });

    const second = await call(url, JSON.stringify({ approved: false }));
    assert.equal(second.status, 410);
    assert.deepEqual(taskOf(await runOf(runId), 'cb').outputs, { approved: true, note: 'ok' });
  });

  it('with a secret, a missing or wrong signature is 401 and changes nothing; the right one resumes', async () => {
    const secret = 'callback-secret-0123456789';
    const before = fake.to('slack').length;
    const runId = await startRun(callbackGraph({ timeout_seconds: 120, secret }));
    const url = await urlSentBy(runId, before);
    await until(runId, waitingCallback, 'the callback wait shows');
    const body = JSON.stringify({ forged: true });
    assert.equal((await call(url, body)).status, 401);
    assert.equal((await call(url, body, { 'x-spur-signature': 'sha256=00' })).status, 401);
    const wrongKey = createHmac('sha256', 'not-the-secret').update(body).digest('hex');
    assert.equal((await call(url, body, { 'x-spur-signature': `sha256=${wrongKey}` })).status, 401);
    const still = await runOf(runId);
    assert.equal(still.status, 'RUNNING');
    assert.equal(taskOf(still, 'cb').waiting_reason, 'callback');

    const good = JSON.stringify({ signed: true });
    const signature = `sha256=${createHmac('sha256', secret).update(good).digest('hex')}`;
    assert.equal((await call(url, good, { 'x-spur-signature': signature })).status, 200);
    const done = await until(runId, (r) => r.status === 'COMPLETED', 'the run completes');
    assert.deepEqual(taskOf(done, 'cb').outputs, { signed: true });
  });

  it("another run's token cannot resume this one; unknown and tampered tokens are 404; an oversized body 413, a non-object 422", async () => {
    const a = fake.to('slack').length;
    const runA = await startRun(callbackGraph({ timeout_seconds: 120 }));
    const urlA = await urlSentBy(runA, a);
    const b = fake.to('slack').length;
    const runB = await startRun(callbackGraph({ timeout_seconds: 120 }));
    const urlB = await urlSentBy(runB, b);
    assert.notEqual(urlA, urlB);
    await until(runA, waitingCallback, 'A waits');
    await until(runB, waitingCallback, 'B waits');

    // A token names its run and node under a MAC: changing either makes it unknown.
    const token = urlA.slice(urlA.lastIndexOf('/') + 1);
    const [payload, mac] = token.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const forged = Buffer.from(JSON.stringify({ ...claims, r: runB })).toString('base64url');
    assert.equal((await call(`${PUBLIC_URL}/api/callbacks/${forged}.${mac}`, '{"x":1}')).status, 404);
    assert.equal((await call(`${PUBLIC_URL}/api/callbacks/not-a-token`, '{"x":1}')).status, 404);
    assert.equal((await call(`${PUBLIC_URL}/api/callbacks/${payload}.${'A'.repeat(43)}`, '{"x":1}')).status, 404);
    assert.equal((await call(urlB, JSON.stringify({ big: 'x'.repeat(4096) }))).status, 413);
    assert.equal((await call(urlB, '[1, 2]')).status, 422);
    assert.equal((await call(urlB, '{not json')).status, 422);
    assert.equal((await call(urlB, '{"x":1}', { 'content-type': 'text/plain' })).status, 415);
    for (const id of [runA, runB]) {
      const run = await runOf(id);
      assert.equal(run.status, 'RUNNING', id);
      assert.equal(taskOf(run, 'cb').waiting_reason, 'callback', id);
    }

    // A's own token resumes A alone.
    assert.equal((await call(urlA, '{"who":"A"}')).status, 200);
    const doneA = await until(runA, (r) => r.status === 'COMPLETED', 'A completes');
    assert.deepEqual(taskOf(doneA, 'cb').outputs, { who: 'A' });
    const stillB = await runOf(runB);
    assert.equal(stillB.status, 'RUNNING');
    assert.equal(taskOf(stillB, 'cb').waiting_reason, 'callback');
    assert.equal((await http().post(`/wf/cancel_workflow/${runB}/`, {})).status, 200);
    await until(runB, (r) => r.status === 'CANCELED', 'B is canceled');
    assert.equal((await call(urlB, '{"late":true}')).status, 410);
  });

  it('on timeout, fail fails the node and continue completes it marked timed out; a call after the timeout is 410', async () => {
    const f = fake.to('slack').length;
    const failing = await startRun(callbackGraph({ timeout_seconds: 2, on_timeout: 'fail' }));
    const urlF = await urlSentBy(failing, f);
    const c = fake.to('slack').length;
    const continuing = await startRun(callbackGraph({ timeout_seconds: 2, on_timeout: 'continue' }));

    const failed = await until(failing, (r) => r.status === 'FAILED' && taskOf(r, 'cb').status === 'FAILED', 'fails');
    assert.match(taskOf(failed, 'cb').error as string, /No callback within 2 s/);
    assert.equal((await call(urlF, '{"late":true}')).status, 410);
    assert.equal(taskOf(await runOf(failing), 'cb').status, 'FAILED');

    const urlC = await urlSentBy(continuing, c);
    const done = await until(continuing, (r) => r.status === 'COMPLETED', 'completes');
    assert.deepEqual(taskOf(done, 'cb').outputs, { timed_out: true });
    assert.deepEqual(taskOf(done, 'out').outputs, { cb: { timed_out: true } });
    assert.equal((await call(urlC, '{"late":true}')).status, 410);
  });

  it('GET /node/supported_types/ lists both with their config schemas; a save with a bad wait is 422 naming the field', async () => {
    const logic = (await http().get('/node/supported_types/')).body.Logic as { name: string; config: any }[];
    const wait = logic.find((e) => e.name === 'WaitNode');
    const cb = logic.find((e) => e.name === 'WaitForCallbackNode');
    assert.deepEqual(Object.keys(wait?.config.properties ?? {}).slice(-2), ['seconds', 'until']);
    assert.match(JSON.stringify(wait?.config.properties.seconds), /"minimum":0,"maximum":31536000/);
    assert.deepEqual(cb?.config.properties.on_timeout.enum, ['fail', 'continue']);
    assert.equal(cb?.config.properties.timeout_seconds.default, 3600);

    const save = (nodes: unknown[], links: unknown[] = []) =>
      http().post('/wf/', { name: `bad-${Math.random()}`, definition: { nodes: [input(), ...nodes], links } });
    const refused = async (res: { status: number; body: any }, loc: (string | number)[], msg: RegExp) => {
      assert.equal(res.status, 422, JSON.stringify(res.body));
      const item = (res.body.detail as { loc: unknown[]; msg: string }[]).find((d) => msg.test(d.msg));
      assert.ok(item, JSON.stringify(res.body));
      assert.deepEqual(item.loc.slice(-loc.length), loc);
    };
    await refused(await save([n('w', 'WaitNode', { seconds: -5 })]), ['config', 'seconds'], /WaitNode 'w'/);
    await refused(await save([n('w', 'WaitNode', { seconds: 10 ** 9 })]), ['config', 'seconds'], /WaitNode 'w'/);
    await refused(await save([n('w', 'WaitNode', { seconds: null })]), ['config', 'seconds'], /needs seconds or until/);
    await refused(
      await save([n('cb', 'WaitForCallbackNode', { on_timeout: 'retry' })]),
      ['config', 'on_timeout'],
      /WaitForCallbackNode 'cb'/,
    );
    await refused(
      await save([
        n('loop', 'ForLoopNode', { num_iterations: 2 }),
        n('w', 'WaitNode', { seconds: 1 }, { parent_id: 'loop' }),
      ]),
      ['parent_id'],
      /not inside a ForLoopNode/,
    );
    await refused(
      await save([n('notify', 'SlackNotifyNode', { channel: 'C1', message: '{{ callback_url("in") }}' })]),
      ['config', 'message'],
      /callback_url\("in"\) names no top-level WaitForCallbackNode/,
    );
  });
});
