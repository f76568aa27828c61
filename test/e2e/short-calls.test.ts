// Short calls (a SingleLLMCallNode or a PythonFuncNode whose timeout is at most LOCAL_CALL_MAX_SECONDS
// and that asks for no heartbeats, in a run that cannot pause or wait) run as local activities of their
// run's workflow: Temporal's history shows no activity task for them (short-python.test.ts: Python's). They keep what a regular activity gave: a fleet-wide
// limit on the model still holds, and a worker killed during the call loses nothing.
import assert from 'node:assert/strict';
import type { temporal } from '@temporalio/proto';
import { type SplitEngine, startSplitEngine, waitForRun } from '../support/engine';
import { type FakeLlmServer, mostAtOnce } from '../support/fake-llm-server';
import { input, l, n } from '../support/graphs';
import { attachFakeLlm } from '../support/llm-engine';
import { closedRunHistory, largestHistoryPayload } from '../support/run-history';
import { startWorker } from '../support/worker';
import { until } from '../support/exec-log';
import {
  assertShownRunningWhileHeld,
  callsSaying as callsSayingAt,
  holdCallsSaying as holdAt,
} from '../support/held-calls';
import { createRunProjection } from '../../src/db/runs/run-projection';
import { createRunEvents } from '../../src/db/runs/run-events';
import type { TaskRecord } from '../../src/engine/run-contract';
import { settingsReachWorkers } from '../support/settings';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { SpurRunStatus } from '../../src/contracts/search-attributes';

const MODEL = 'openai/gpt-4o-mini';
const ask = (id: string, config: Record<string, unknown> = {}) =>
  n(id, 'SingleLLMCallNode', { llm_info: { model: MODEL, max_tokens: 50 }, user_message: 'say {{in.x}}', ...config });

/** in → short (timeout 30 s) → out: the call runs as a local activity. */
const shortCall = {
  nodes: [
    input(),
    ask('short', { timeout_seconds: 30 }),
    n('out', 'OutputNode', { output_map: { a: 'short.output' } }),
  ],
  links: [l('in', 'short'), l('short', 'out')],
};

type Task = { node_id: string; status: string; outputs: Record<string, unknown> | null; waited_ms?: number };

/** The nodes Temporal scheduled an activity task for, from their summaries `<title> (<id>)`. */
function activityNodes(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? [])
    .filter((e) => e.activityTaskScheduledEventAttributes)
    .map((e) => {
      const data = e.userMetadata?.summary?.data;
      const text = data ? (JSON.parse(Buffer.from(data).toString('utf8')) as string) : '';
      return /\(([^()]+)\)$/.exec(text)?.[1] ?? text;
    })
    .sort();
}

describe('e2e: short calls run as local activities', function () {
  this.timeout(240_000);
  let engine: SplitEngine;
  let fake: FakeLlmServer;
  before(async () => {
    engine = await startSplitEngine();
    fake = await attachFakeLlm(engine);
  });
  afterEach(async () => {
    fake.respondWith(undefined);
    assert.equal((await engine.http.put('/limits/', [])).status, 200);
    // Until the worker has the change, a short call would still see the old limit and go regular.
    await settingsReachWorkers();
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  const create = async (name: string, definition: unknown) => {
    const res = await engine.http.post('/wf/', { name, definition });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  const start = async (workflowId: string, x: string) => {
    const res = await engine.http.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x } } });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  const tasksOf = async (runId: string) => (await engine.http.get(`/run/${runId}/`)).body.tasks as Task[];
  const callsSaying = (word: string) => callsSayingAt(fake, word);
  const holdCallsSaying = (word: string, output: string) => holdAt(fake, word, output);

  it('a short model call and a short PythonFuncNode get no activity task; a long call, a long PythonFuncNode and one asking for heartbeats still do; all answer', async () => {
    const wf = await create('short and long', {
      nodes: [
        input(),
        ask('short', { timeout_seconds: 30 }),
        n('py', 'PythonFuncNode', {
          code: 'return {"y": input_model.short.output + "!"}',
          output_schema: { y: 'string' },
        }),
        ask('long'),
        n('slow', 'PythonFuncNode', {
          code: 'return {"w": input_model.py.y + "+"}',
          timeout_seconds: 61,
          output_schema: { w: 'string' },
        }),
        n('beat', 'PythonFuncNode', {
          code: 'return {"z": input_model.slow.w + "?"}',
          heartbeat_timeout_seconds: 5,
          output_schema: { z: 'string' },
        }),
        n('out', 'OutputNode', { output_map: { z: 'beat.z', long: 'long.output' } }),
      ],
      links: [
        l('in', 'short'),
        l('short', 'py'),
        l('in', 'long'),
        l('py', 'slow'),
        l('slow', 'beat'),
        l('beat', 'out'),
        l('long', 'out'),
      ],
    });
    const runId = await start(wf, 'hi');
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    const out = (await engine.http.get(`/run/${runId}/`)).body;
    assert.deepEqual(out.outputs.out, { z: 'echo: say hi!+?', long: 'echo: say hi' });
    const tasks = out.tasks as Task[];
    assert.deepEqual(tasks.find((t) => t.node_id === 'short')?.outputs, { output: 'echo: say hi' });
    assert.ok(tasks.every((t) => t.status === 'COMPLETED'));
    assert.deepEqual(activityNodes(await closedRunHistory(engine, runId)), ['beat', 'long', 'slow']);
  });

  it('in a run that can pause, a short call stays a regular activity: a decision on the pause is never held behind it', async () => {
    const wf = await create('gated short', {
      nodes: [
        input(),
        n('gate', 'HumanInterventionNode'),
        ask('after', { timeout_seconds: 30, user_message: 'say after' }),
      ],
      links: [l('in', 'gate'), l('gate', 'after')],
    });
    const runId = await start(wf, 'gated');
    await waitForRun(engine.http, runId, (r) => r.status === 'PAUSED', 60_000);
    const decided = await engine.http.post(`/wf/process_pause_action/${runId}/`, {
      action: 'APPROVE',
      user_id: 'dana',
      inputs: {},
      comments: '',
    });
    assert.equal(decided.status, 200, decided.text);
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    assert.deepEqual(activityNodes(await closedRunHistory(engine, runId)), ['after']);
  });

  it('forty short calls answering 120 KB each at once: the run completes with every answer whole, and no history payload holds over 16 KB of one', async () => {
    const calls = Array.from({ length: 40 }, (_, i) => ask(`a${i}`, { timeout_seconds: 30 }));
    const wf = await create('wide short', {
      nodes: [input(), ...calls],
      links: calls.map((c) => l('in', c.id)),
    });
    const long = 'y'.repeat(120 * 1024);
    fake.respondWith(() => ({ content: JSON.stringify({ output: long }) }));
    const runId = await start(wf, 'wide');
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    const tasks = await tasksOf(runId);
    assert.equal(tasks.filter((t) => t.status === 'COMPLETED' && t.outputs?.output === long).length, 40);
    const { bytes } = await largestHistoryPayload(engine, runId);
    assert.ok(bytes <= 17 * 1024, `a history payload of ${bytes} bytes`);
  });

  it('a run is listed RUNNING in Temporal from its start and its status is upserted once, at its end', async () => {
    const wf = await create('listed', shortCall);
    const release = holdCallsSaying('listed', 'ok');
    const runId = await start(wf, 'listed');
    const handle = engine.api.temporal.workflow.getHandle(
      runWorkflowId(runId, engine.api.config.temporal.workflowIdPrefix),
    );
    const listedAs = async () => (await handle.describe()).typedSearchAttributes.get(SpurRunStatus);
    try {
      await until('the call is made', () => callsSaying('listed').length > 0, 60_000);
      assert.equal(await listedAs(), 'RUNNING');
      assert.equal((await tasksOf(runId)).find((t) => t.node_id === 'short')?.status, 'RUNNING');
    } finally {
      release();
    }
    assert.equal((await waitForRun(engine.http, runId, undefined, 120_000)).status, 'COMPLETED');
    const history = await closedRunHistory(engine, runId);
    assert.equal(await listedAs(), 'COMPLETED');
    assert.equal((history.events ?? []).filter((e) => e.upsertWorkflowSearchAttributesEventAttributes).length, 1);
  });

  it("a short call no other node runs beside writes the save that shows it RUNNING and runs the OutputNode after it itself: record and event stream show it RUNNING while the provider holds the reply, the output is recorded as before, and the run takes one local activity: the call's, which writes the run's final save too", async () => {
    const markersOf = async (runId: string) =>
      ((await closedRunHistory(engine, runId)).events ?? []).filter((e) => e.markerRecordedEventAttributes).length;
    const release = holdCallsSaying('carried', 'ok');
    const runId = await start(await create('carried', shortCall), 'carried');
    try {
      await assertShownRunningWhileHeld(engine, fake, runId, 'carried', 'short');
    } finally {
      release();
    }
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED');
    assert.deepEqual((run.outputs as Record<string, unknown>).out, { a: 'ok' });
    const tasks = (await engine.http.get(`/run/${runId}/`)).body.tasks as (Task & {
      inputs: unknown;
      start_time: string;
      end_time: string;
    })[];
    const [short, out] = ['short', 'out'].map((id) => tasks.find((t) => t.node_id === id));
    assert.deepEqual(
      { status: out?.status, inputs: out?.inputs, outputs: out?.outputs },
      { status: 'COMPLETED', inputs: { short: { output: 'ok' } }, outputs: { a: 'ok' } },
    );
    assert.ok(Date.parse(out?.start_time ?? '') >= Date.parse(short?.end_time ?? ''), 'out starts once the call ended');
    // Beside another call the save stays a local activity of its own: a, b and out as above, plus it.
    fake.respondWith(undefined);
    const beside = {
      nodes: [input(), ask('a', { timeout_seconds: 30 }), ask('b', { timeout_seconds: 30 }), n('out', 'OutputNode')],
      links: [l('in', 'a'), l('in', 'b'), l('a', 'out'), l('b', 'out')],
    };
    const besideId = await start(await create('beside', beside), 'beside');
    assert.equal((await waitForRun(engine.http, besideId, undefined, 120_000)).status, 'COMPLETED');
    // The carried run: the call with its save, out and the run's final save.
    assert.equal(await markersOf(runId), 1);
    const ended = (await engine.http.get(`/run/${runId}/`)).body as { end_time: string | null };
    assert.ok(ended.end_time, 'the final save recorded the end');
    // Beside: a save before each call, the two calls, out and the final save (one more when a call
    // ends while the other runs); carried, its saves would be two fewer.
    assert.ok((await markersOf(besideId)) >= 6, `${await markersOf(besideId)} local activities`);
  });

  it("a node after a short call that fails in the call's own activity fails as it would alone: its task says why, the call's answer stays, the run ends FAILED naming it", async () => {
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'fine' }) }));
    const definition = {
      nodes: [
        input(),
        ask('short', { timeout_seconds: 30 }),
        n('out', 'OutputNode', { output_map: { a: 'short.missing' } }),
      ],
      links: [l('in', 'short'), l('short', 'out')],
    };
    const runId = await start(await create('follow-up fails', definition), 'fails');
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'FAILED');
    assert.match(String(run.message), /Node 'out' \(out\) failed: Output field 'a': path 'short.missing' not found/);
    const tasks = (await tasksOf(runId)) as (Task & { error: string | null })[];
    assert.deepEqual(
      tasks
        .filter((t) => t.node_id !== 'in')
        .map((t) => [t.node_id, t.status, t.outputs, t.error?.slice(0, 19) ?? null]),
      [
        ['short', 'COMPLETED', { output: 'fine' }, null],
        ['out', 'FAILED', null, "Output field 'a': p"],
      ],
    );
    // The call with out, the save that shows the failure, the final save (out alone: one more).
    const history = await closedRunHistory(engine, runId);
    assert.equal((history.events ?? []).filter((e) => e.markerRecordedEventAttributes).length, 3);
  });

  it("a carried call the provider refuses fails its node, not the run's record: the run ends FAILED naming the node, its task shows the provider's error, and its workflow completes", async () => {
    fake.respondWith(() => ({ status: 400, body: { error: { message: 'bad request: carried', type: 'invalid' } } }));
    const runId = await start(await create('carried refused', shortCall), 'refused');
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'FAILED');
    assert.match(String(run.message), /^Node 'short' \(short\) failed: /);
    assert.doesNotMatch(String(run.message), /could not be saved/);
    // A failed node ends its run's workflow normally; a record refused for good fails the workflow.
    const handle = engine.api.temporal.workflow.getHandle(
      runWorkflowId(runId, engine.api.config.temporal.workflowIdPrefix),
    );
    await until('the workflow closed', async () => (await handle.describe()).status.name !== 'RUNNING', 30_000);
    assert.equal((await handle.describe()).status.name, 'COMPLETED');
    // Read once the workflow closed: the run shows FAILED as soon as the node fails, before its end.
    const tasks = (await tasksOf(runId)) as (Task & { error: string | null })[];
    const short = tasks.find((t) => t.node_id === 'short');
    assert.equal(short?.status, 'FAILED');
    assert.match(String(short?.error), /carried/);
    assert.equal(tasks.find((t) => t.node_id === 'out')?.status, 'CANCELED');
  });

  it('saves replayed after a run ended (its workflow task run again on another worker) change neither its record nor its events', async () => {
    const runId = await start(await create('ended once', shortCall), 'end');
    assert.equal((await waitForRun(engine.http, runId, undefined, 120_000)).status, 'COMPLETED');
    const { models } = engine.api;
    const record = async () => ({
      run: (await engine.http.get(`/run/${runId}/`)).body,
      events: await models.RunEvent.countDocuments({ run_id: runId }),
    });
    const before = await record();
    const tasks = before.run.tasks as TaskRecord[];
    const replayedAs = (status: TaskRecord['status'], outputs: TaskRecord['outputs']) =>
      tasks.map((t) => (t.node_id === 'short' ? { ...t, status, outputs, end_time: null } : t));
    const runs = createRunProjection(models, createRunEvents(models));
    // The workflow task again: the save before the call, then the end with the call's second answer.
    await runs.save({
      runId,
      tasks: { records: replayedAs('RUNNING', null) },
      run: { status: 'RUNNING', message: null },
    });
    await runs.save({
      runId,
      tasks: { records: replayedAs('COMPLETED', { output: 'another answer' }) },
      run: { status: 'COMPLETED', message: null, final: { outputsByTitle: { out: { a: 'another answer' } } } },
    });
    assert.deepEqual(await record(), before);
  });

  it('under max_concurrent 1 six short calls reach the provider one at a time (without the limit they overlap), and all complete', async () => {
    const wf = await create('limited short', shortCall);
    const overlapOf = async (tag: string) => {
      const runIds = await Promise.all(Array.from({ length: 6 }, (_, i) => start(wf, `${tag}${i}`)));
      for (const id of runIds) {
        const run = await waitForRun(engine.http, id, undefined, 120_000);
        assert.equal(run.status, 'COMPLETED', `${id}: ${run.message}`);
      }
      const sent = runIds.map((_, i) => callsSaying(`${tag}${i}`));
      assert.deepEqual(
        sent.map((s) => s.length),
        [1, 1, 1, 1, 1, 1],
        'one request per run',
      );
      return mostAtOnce(sent.flat());
    };
    // Long enough that calls overlap however slowly a loaded host starts the runs.
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), delayMs: 800 }));
    assert.ok((await overlapOf('free')) > 1, 'without a limit, the calls overlap');
    assert.equal((await engine.http.put('/limits/', [{ key: 'openai', max_concurrent: 1 }])).status, 200);
    await settingsReachWorkers();
    assert.equal(await overlapOf('held'), 1, 'under the limit, one at a time');
  });

  it('a cancel during a short call reaches the run: it ends CANCELED and the call is stopped, unanswered, within 2 s of the cancel (docs/runs.md)', async () => {
    const wf = await create('short cancel', shortCall);
    const release = holdCallsSaying('stop', 'late');
    const runId = await start(wf, 'stop');
    await until('the call at the provider', async () => callsSaying('stop').length === 1);
    const sent = Date.now();
    const cancel = await engine.http.post(`/wf/cancel_workflow/${runId}/`, {});
    assert.equal(cancel.status, 200, cancel.text);
    const run = await waitForRun(engine.http, runId, undefined, 30_000);
    assert.equal(run.status, 'CANCELED', JSON.stringify(run.message));
    release();
    await new Promise((r) => setTimeout(r, 500));
    const [call] = callsSaying('stop');
    assert.equal(call?.answered, undefined, 'the client had gone: the held reply reached nobody');
    // The api's cancel mark stops it (run-cancel-watch.ts), not the workflow task's heartbeat 8 s on.
    assert.ok(call?.abandoned !== undefined, 'the request was dropped');
    assert.ok(call.abandoned - sent <= 2000, `the call went on for ${call.abandoned - sent} ms after the cancel`);
    assert.equal((await tasksOf(runId)).find((t) => t.node_id === 'short')?.status, 'CANCELED');
    assert.deepEqual(activityNodes(await closedRunHistory(engine, runId)), [], 'the call was a local activity');
  });

  it('a worker killed -9 during a short call: the call is made again on the next worker, and the run completes once with its answer', async () => {
    const wf = await create('short crash', shortCall);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    fake.respondWith((req) =>
      JSON.stringify(req.body).includes('say cut')
        ? callsSaying('cut').length === 1
          ? { content: JSON.stringify({ output: 'lost' }), heldUntil: held }
          : { content: JSON.stringify({ output: 'second' }) }
        : undefined,
    );
    const runId = await start(wf, 'cut');
    await until('the call at the provider', async () => callsSaying('cut').length === 1);
    const victim = engine.worker;
    victim.process.kill('SIGKILL');
    await victim.process.exited;
    release();
    engine.worker = await startWorker(engine.api.env);
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    assert.equal(callsSaying('cut').length, 2, 'the cut-off call was made once more');
    const tasks = await tasksOf(runId);
    assert.deepEqual(tasks.map((t) => [t.node_id, t.status]).sort(), [
      ['in', 'COMPLETED'],
      ['out', 'COMPLETED'],
      ['short', 'COMPLETED'],
    ]);
    assert.deepEqual(tasks.find((t) => t.node_id === 'short')?.outputs, { output: 'second' });
  });
});
