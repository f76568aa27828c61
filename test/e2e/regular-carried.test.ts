// A model call over the short-call bound (its default timeout, 280 s) is a regular activity. Run
// alone in a run that cannot pause, it carries what a short call carries: the save that shows it
// RUNNING, the OutputNode after it and the run's final save, as long as the run's tasks are small
// (REGULAR_CARRY_MAX_CHARS: the history keeps a regular activity's input); it looks for a
// fleet-wide limit on its model itself; and it leaves its heartbeats to the node's periodic beat.
// What users see stays as it was.
import assert from 'node:assert/strict';
import type { temporal } from '@temporalio/proto';
import { type SplitEngine, startSplitEngine, waitForRun } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { input, l, n } from '../support/graphs';
import { attachFakeLlm } from '../support/llm-engine';
import { closedRunHistory, localActivityTypes, pendingActivityTimes } from '../support/run-history';
import { until } from '../support/exec-log';
import { assertShownRunningWhileHeld, callsSaying as callsSayingAt, holdCallsSaying } from '../support/held-calls';
import { openSse } from '../support/sse';
import { settingsReachWorkers } from '../support/settings';
import { startWorker } from '../support/worker';
import { REGULAR_CARRY_MAX_CHARS } from '../../temporal/workflows/run-keeper';

const MODEL = 'openai/gpt-4o-mini';

/** in → ask (no timeout set: the provider request's 280 s, a regular activity) → out. */
const oneCall = {
  nodes: [
    input(),
    n('ask', 'SingleLLMCallNode', { llm_info: { model: MODEL, max_tokens: 50 }, user_message: 'say {{in.x}}' }),
    n('out', 'OutputNode', { output_map: { a: 'ask.output' } }),
  ],
  links: [l('in', 'ask'), l('ask', 'out')],
};

type Task = { node_id: string; status: string; outputs: Record<string, unknown> | null; end_time: string | null };

/** The inputs Temporal scheduled the run's activity tasks with, in order. */
function scheduledInputs(history: temporal.api.history.v1.IHistory): Array<Record<string, unknown>> {
  return (history.events ?? []).flatMap((e) => {
    const data = e.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data;
    return data ? [JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>] : [];
  });
}

describe('e2e: a regular model call carries its saves when its run is small', function () {
  this.timeout(240_000);
  let engine: SplitEngine;
  let fake: FakeLlmServer;
  let workflowId: string;
  before(async () => {
    engine = await startSplitEngine();
    fake = await attachFakeLlm(engine);
    const res = await engine.http.post('/wf/', { name: 'one regular call', definition: oneCall });
    assert.equal(res.status, 200, res.text);
    workflowId = res.body.id as string;
  });
  afterEach(async () => {
    fake.respondWith(undefined);
    assert.equal((await engine.http.put('/limits/', [])).status, 200);
    await settingsReachWorkers();
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  const start = async (x: string, workflow = workflowId) => {
    const res = await engine.http.post(`/wf/${workflow}/start_run/`, { initial_inputs: { in: { x } } });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  const callsSaying = (word: string) => callsSayingAt(fake, word);
  const hold = (word: string, output: string) => holdCallsSaying(fake, word, output);

  it("shows the call RUNNING in the record and the event stream while the provider holds the reply, records its answer and the run's end as before, and its run's history holds the call's activity task and no local activity", async () => {
    const release = hold('carried', 'ok');
    const runId = await start('carried');
    try {
      await assertShownRunningWhileHeld(engine, fake, runId, 'carried', 'ask');
    } finally {
      release();
    }
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    assert.deepEqual((run.outputs as Record<string, unknown>).out, { a: 'ok' });
    const record = (await engine.http.get(`/run/${runId}/`)).body as { end_time: string | null; tasks: Task[] };
    assert.ok(record.end_time, 'the run has its end');
    assert.deepEqual(
      record.tasks.map((t) => [t.node_id, t.status, t.outputs]),
      [
        ['in', 'COMPLETED', { x: 'carried' }],
        ['ask', 'COMPLETED', { output: 'ok' }],
        ['out', 'COMPLETED', { a: 'ok' }],
      ],
    );
    assert.deepEqual(await localActivityTypes(engine, runId), []);
    const scheduled = scheduledInputs(await closedRunHistory(engine, runId));
    assert.equal(scheduled.length, 1);
    assert.ok(scheduled[0]?.save && scheduled[0]?.end && scheduled[0]?.followUp, 'the save, the end and out carried');
  });

  it(`a run whose tasks are over ${REGULAR_CARRY_MAX_CHARS} characters saves them itself: no copy of them in the activity's input, RUNNING still shown, the run completes`, async () => {
    // Under the 16 KB a value is kept inline up to, twice in the tasks (in's output, ask's input).
    const x = `big ${'y'.repeat(REGULAR_CARRY_MAX_CHARS / 2)}`;
    const release = hold('big', 'fine');
    const runId = await start(x);
    try {
      await until('the call is made', () => callsSaying('big').length > 0, 60_000);
      const shown = (await engine.http.get(`/run/${runId}/`)).body as { tasks: Task[] };
      assert.equal(shown.tasks.find((t) => t.node_id === 'ask')?.status, 'RUNNING');
    } finally {
      release();
    }
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    assert.deepEqual((run.outputs as Record<string, unknown>).out, { a: 'fine' });
    const [call, ...others] = scheduledInputs(await closedRunHistory(engine, runId));
    assert.equal(others.length, 0);
    assert.equal(call?.save, undefined);
    assert.equal(call?.end, undefined);
    // The save that shows it RUNNING, the run's final save: the run's own.
    assert.deepEqual(await localActivityTypes(engine, runId), ['saveProgress', 'saveProgress']);
  });

  it('under a fleet-wide limit on its model the carried call sends nothing, then goes through a slot: the provider sees the call once and the run completes with its answer', async () => {
    assert.equal((await engine.http.put('/limits/', [{ key: 'openai', max_concurrent: 1 }])).status, 200);
    await settingsReachWorkers();
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'slotted' }) }));
    const runId = await start('limited');
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    assert.deepEqual((run.outputs as Record<string, unknown>).out, { a: 'slotted' });
    assert.equal(callsSaying('limited').length, 1);
    const scheduled = scheduledInputs(await closedRunHistory(engine, runId));
    assert.deepEqual(
      scheduled.map((s) => [s.unlimitedOnly === true, s.slots !== undefined]),
      [
        [true, false],
        [false, true],
      ],
    );
    assert.ok((await localActivityTypes(engine, runId)).includes('askModelSlots'));
  });

  it("sends Temporal no heartbeat with its request: the first is the node's periodic beat, 5 s into the call, and the run completes", async () => {
    const release = hold('beat', 'ok');
    const runId = await start('beat');
    let times = { startedMs: null as number | null, heartbeatMs: null as number | null };
    try {
      await until('the call at the provider', async () => callsSaying('beat').length === 1, 60_000);
      await until(
        'a heartbeat recorded',
        async () => (times = await pendingActivityTimes(engine, runId)).heartbeatMs !== null,
        30_000,
      );
    } finally {
      release();
    }
    // Both by Temporal's clock: a beat sent with the request would come within milliseconds of the start.
    const first = (times.heartbeatMs as number) - (times.startedMs as number);
    assert.ok(first >= 4500, `the first heartbeat came ${first} ms after the activity started`);
    const run = await waitForRun(engine.http, runId, undefined, 60_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    assert.deepEqual((run.outputs as Record<string, unknown>).out, { a: 'ok' });
  });

  it('a carried call answered once its run shows CANCELED changes neither: the record stays CANCELED and its stream says run.canceled once, last', async () => {
    const release = hold('race', 'raced');
    const runId = await start('race');
    await until('the call at the provider', async () => callsSaying('race').length === 1, 60_000);
    assert.equal((await engine.http.post(`/wf/cancel_workflow/${runId}/`, {})).status, 200);
    const status = async () => ((await engine.http.get(`/run/${runId}/`)).body as { status: string }).status;
    // A cancel does not wait for the call: the run ends first, then the provider answers.
    await until('the run shows CANCELED', async () => (await status()) === 'CANCELED', 30_000);
    release();
    await closedRunHistory(engine, runId);
    // What the call's activity still writes comes within its heartbeat and cancel-watch intervals.
    await new Promise((r) => setTimeout(r, 6000));
    assert.equal(await status(), 'CANCELED');
    const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
    await stream.ended;
    const names = stream.events.map((e) => e.event);
    assert.deepEqual(
      names.filter((e) => e.startsWith('run.') && e !== 'run.status'),
      ['run.canceled'],
      names.join(', '),
    );
    assert.equal(names.at(-1), 'run.canceled', names.join(', '));
  });

  it('a cancel during a carried call ends the run CANCELED, its task and the node after it CANCELED, and the call is dropped unanswered within 10 s', async () => {
    const release = hold('stop', 'late');
    const runId = await start('stop');
    await until('the call at the provider', async () => callsSaying('stop').length === 1, 60_000);
    const cancel = await engine.http.post(`/wf/cancel_workflow/${runId}/`, {});
    assert.equal(cancel.status, 200, cancel.text);
    const run = await waitForRun(engine.http, runId, undefined, 30_000);
    assert.equal(run.status, 'CANCELED', JSON.stringify(run.message));
    await closedRunHistory(engine, runId);
    const [call] = callsSaying('stop');
    try {
      // The activity hears of the cancel at its next heartbeat or look for the api's cancel mark.
      await until('the request was dropped', () => call?.abandoned !== undefined, 10_000);
    } finally {
      release();
    }
    assert.equal(call?.answered, undefined, 'the held reply reached nobody');
    const record = (await engine.http.get(`/run/${runId}/`)).body as {
      status: string;
      outputs: unknown;
      tasks: Task[];
    };
    assert.equal(record.status, 'CANCELED');
    assert.equal(record.tasks.find((t) => t.node_id === 'ask')?.status, 'CANCELED');
    assert.equal(record.tasks.find((t) => t.node_id === 'out')?.status, 'CANCELED');
  });

  it("a worker killed -9 during a carried call: the next worker's attempt shows the node RUNNING while it calls again, and the run completes once with the second answer", async () => {
    // Heartbeats every 2 s: the lost attempt is noticed in seconds, not the default 20.
    const definition = {
      ...oneCall,
      nodes: oneCall.nodes.map((node) =>
        node.id === 'ask' ? { ...node, config: { ...node.config, heartbeat_timeout_seconds: 2 } } : node,
      ),
    };
    const created = await engine.http.post('/wf/', { name: 'regular crash', definition });
    assert.equal(created.status, 200, created.text);
    const releases: Array<() => void> = [];
    fake.respondWith((req) => {
      if (!JSON.stringify(req.body).includes('say cut')) return undefined;
      const held = new Promise<void>((resolve) => releases.push(resolve));
      const output = callsSaying('cut').length === 1 ? 'lost' : 'second';
      return { content: JSON.stringify({ output }), heldUntil: held };
    });
    const runId = await start('cut', created.body.id as string);
    try {
      await until('the call at the provider', async () => callsSaying('cut').length === 1, 60_000);
      const victim = engine.worker;
      victim.process.kill('SIGKILL');
      await victim.process.exited;
      engine.worker = await startWorker(engine.api.env);
      await until('the call made again', async () => callsSaying('cut').length === 2, 60_000);
      const shown = (await engine.http.get(`/run/${runId}/`)).body as { status: string; tasks: Task[] };
      assert.equal(shown.status, 'RUNNING');
      assert.equal(shown.tasks.find((t) => t.node_id === 'ask')?.status, 'RUNNING');
    } finally {
      for (const release of releases) release();
    }
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    assert.deepEqual((run.outputs as Record<string, unknown>).out, { a: 'second' });
    assert.equal(callsSaying('cut').length, 2);
    const tasks = (await engine.http.get(`/run/${runId}/`)).body.tasks as Task[];
    assert.deepEqual(
      tasks.map((t) => [t.node_id, t.status, t.outputs]),
      [
        ['in', 'COMPLETED', { x: 'cut' }],
        ['ask', 'COMPLETED', { output: 'second' }],
        ['out', 'COMPLETED', { a: 'second' }],
      ],
    );
  });
});
