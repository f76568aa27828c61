// A PythonFuncNode whose timeout is at most LOCAL_CALL_MAX_SECONDS (its default, 30 s, is) and that
// asks for no heartbeats, in a run that cannot pause or wait, runs as a local activity of its run's
// workflow, as a short model call does (short-calls.test.ts): no activity task in Temporal's
// history, its save that shows it RUNNING carried by its own activity. It keeps what the regular
// activity gave: the record shows it RUNNING while it runs, a cancel stops its processes at once
// (cancel-python.test.ts times that), and a worker killed while it runs loses nothing.
import assert from 'node:assert/strict';
import { type SplitEngine, startSplitEngine, waitForRun } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { closedRunHistory, localActivityTypes } from '../support/run-history';
import { startWorker } from '../support/worker';
import { until } from '../support/exec-log';
import { openSse } from '../support/sse';
import { eventually, pidsWith, processEnded, processTokens, tokenedWait } from '../support/python-runs';

type Task = { node_id: string; status: string; outputs: Record<string, unknown> | null };

describe('e2e: a short PythonFuncNode runs as a local activity', function () {
  this.timeout(240_000);
  let engine: SplitEngine;
  const tokens = processTokens('spur-short-py');
  before(async () => {
    engine = await startSplitEngine();
  });
  after(async () => {
    tokens.killAll();
    await engine?.close();
  });

  /** in → py (the code, default timeout unless `config` says) → out. */
  const start = async (code: string, config: Record<string, unknown> = {}) => {
    const definition = {
      nodes: [
        input(),
        n('py', 'PythonFuncNode', { code, output_schema: { y: 'string' }, ...config }),
        n('out', 'OutputNode', { output_map: { y: 'py.y' } }),
      ],
      links: [l('in', 'py'), l('py', 'out')],
    };
    const created = await engine.http.post('/wf/', { name: `short-py-${Math.random()}`, definition });
    assert.equal(created.status, 200, created.text);
    const started = await engine.http.post(`/wf/${created.body.id}/start_run/`, {
      initial_inputs: { in: { x: 'hi' } },
    });
    assert.equal(started.status, 200, started.text);
    return started.body.id as string;
  };
  const tasksOf = async (runId: string) => (await engine.http.get(`/run/${runId}/`)).body.tasks as Task[];

  it("has no activity task: its own local activity runs it with the OutputNode after it and writes the run's final save; the outputs are as before", async () => {
    const runId = await start('return {"y": input_model["in"]["x"] + "!"}');
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    assert.deepEqual((run.outputs as Record<string, unknown>).out, { y: 'hi!' });
    const history = await closedRunHistory(engine, runId);
    assert.equal((history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes).length, 0);
    assert.deepEqual(await localActivityTypes(engine, runId), ['executePythonFuncNode']);
  });

  it('while it runs, the record and the event stream show it RUNNING (its activity wrote that save before the code started)', async () => {
    const token = tokens.next();
    const runId = await start(`${tokenedWait(token, 600)}\nreturn {"y": "never"}`, { timeout_seconds: 60 });
    const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
    try {
      await eventually('the node’s code runs', () => pidsWith(token)[0]);
      const shown = (await engine.http.get(`/run/${runId}/`)).body as { status: string; tasks: Task[] };
      assert.equal(shown.status, 'RUNNING');
      assert.equal(shown.tasks.find((t) => t.node_id === 'py')?.status, 'RUNNING');
      await stream.waitFor((seen) => seen.some((e) => e.event === 'task.started' && e.data?.node_id === 'py'), 20_000);
    } finally {
      stream.close();
    }
    const cancel = await engine.http.post(`/wf/cancel_workflow/${runId}/`);
    assert.equal(cancel.status, 200, cancel.text);
    assert.equal((await waitForRun(engine.http, runId, undefined, 60_000)).status, 'CANCELED');
  });

  it('a worker killed -9 while it runs: its processes die with the worker, the node runs again on the next worker, and the run completes once with its answer', async () => {
    const token = tokens.next();
    // Each attempt's code waits 5 s in a child the host can see, then answers.
    const runId = await start(`${tokenedWait(token, 5)}\nreturn {"y": "done"}`);
    const first = await eventually('the node’s code runs', () => pidsWith(token)[0]);
    const victim = engine.worker;
    victim.process.kill('SIGKILL');
    await victim.process.exited;
    await until('the killed worker’s Python has ended', () => processEnded(first), 10_000);
    engine.worker = await startWorker(engine.api.env);
    const again = await eventually(
      'the node’s code runs again',
      () => pidsWith(token).find((p) => p !== first),
      60_000,
    );
    assert.notEqual(again, first);
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run.message));
    assert.deepEqual((run.outputs as Record<string, unknown>).out, { y: 'done' });
    const tasks = await tasksOf(runId);
    assert.deepEqual(tasks.map((t) => [t.node_id, t.status]).sort(), [
      ['in', 'COMPLETED'],
      ['out', 'COMPLETED'],
      ['py', 'COMPLETED'],
    ]);
  });
});
