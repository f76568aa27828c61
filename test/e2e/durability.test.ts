import assert from 'node:assert/strict';
import path from 'node:path';
import { onFreePort } from '../../scripts/lib/ports';
import { TEMPORAL_DEV_OPTIONS, restartTemporal, startTemporal, type TemporalServer } from '../../scripts/lib/servers';
import { startApi, type TestApi } from '../support/api';
import { startApiProcess } from '../support/api-process';
import { waitForRun } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { runsWithStoredTasks } from '../support/db-state';
import { until } from '../support/exec-log';
import { type NodeAttempt, attemptsOf } from '../support/node-attempts';
import { stack } from '../support/stack';
import { startWorker, type TestWorker } from '../support/worker';

/** Python that sleeps: what a crash should interrupt (Temporal records where and how often it ran). */
function slowPython(id: string, seconds: number, src = 'input_model.src') {
  const code = ['import time', `time.sleep(${seconds})`, `return {"done": ${src}.tag}`].join('\n');
  return n(id, 'PythonFuncNode', {
    code,
    timeout_seconds: 60,
    heartbeat_timeout_seconds: 3,
    output_schema: { done: 'string' },
  });
}

const slowDefinition = {
  nodes: [
    input('src'),
    slowPython('p1', 0.2),
    n('m', 'MergeNode'),
    slowPython('p2', 5, 'input_model.m.src'),
    n('out', 'OutputNode'),
  ],
  links: [l('src', 'p1'), l('p1', 'm'), l('src', 'm'), l('m', 'p2'), l('p2', 'out')],
};

/** Every run COMPLETED, one COMPLETED task per node, and p2's output is its own run's tag. */
async function assertCompleted(http: ReturnType<typeof client>, runIds: string[], tagPrefix: string): Promise<void> {
  const done = await Promise.all(runIds.map((id) => waitForRun(http, id, undefined, 120_000)));
  for (const [i, run] of done.entries())
    assert.equal(run.status, 'COMPLETED', `${runIds[i]}: ${JSON.stringify(run.message)}`);
  for (const [i, id] of runIds.entries()) {
    const run = (await http.get(`/run/${id}/`)).body;
    assert.deepEqual(
      run.tasks.map((t: { node_id: string }) => t.node_id).sort(),
      ['m', 'out', 'p1', 'p2', 'src'],
      `${id}: one task per node`,
    );
    assert.ok(
      run.tasks.every((t: { status: string }) => t.status === 'COMPLETED'),
      id,
    );
    assert.deepEqual(run.outputs.p2, { done: `${tagPrefix}${i}` }, `${id}: its own output`);
  }
}

/** Runs in flight when the worker is killed: enough that some nodes are cut off and some had completed. */
const CRASH_RUNS = 12;

describe('e2e: durability — killed workers, a restarted Temporal server, a killed api', function () {
  this.timeout(180_000);
  let api: TestApi;
  let worker: TestWorker | undefined;
  /** Where and how often nodes ran, from Temporal (the api changes per test). */
  const ofNode = (runId: string, node: string) => attemptsOf(api).ofNode(runId, node);
  const allAt = (runIds: string[], node: string, states: NodeAttempt['state'][]) =>
    attemptsOf(api).allAt(runIds, node, states);

  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
    await api?.close();
  });

  it(`finishes ${CRASH_RUNS} runs after kill -9 of the worker mid-activity; completed nodes do not run again`, async () => {
    api = await startApi();
    const http = client(api.baseUrl);
    worker = await startWorker(api.env);
    const victim = worker.process.pid;
    const wf = (await http.post('/wf/', { name: 'crash me', definition: slowDefinition })).body;
    const runIds: string[] = [];
    for (let i = 0; i < CRASH_RUNS; i++) {
      const res = await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { tag: `t${i}` } } });
      assert.equal(res.status, 200);
      runIds.push(res.body.id);
    }
    // Every run is inside p2, with p1 done: kill now.
    await until('all runs in p2', () => allAt(runIds, 'p2', ['running', 'completed']));
    const before = await Promise.all(runIds.map((id) => http.get(`/run/${id}/`)));
    for (const r of before)
      assert.equal(r.body.tasks.find((t: { node_id: string }) => t.node_id === 'p1').status, 'COMPLETED');
    worker.process.kill('SIGKILL');
    await worker.process.exited;
    // Temporal settles what the kill left: a p2 whose completion it got stays completed (attempt 1),
    // one cut off is started again once its heartbeat stops (attempt 2). On a loaded machine the
    // first runs' p2 may have finished before the last one started.
    await until('Temporal to notice the lost worker', async () =>
      (await Promise.all(runIds.map((id) => ofNode(id, 'p2')))).every((list) =>
        list.some((a) => a.state === 'completed' || a.attempt >= 2),
      ),
    );
    const completedAtKill = new Set<string>();
    for (const id of runIds) if ((await ofNode(id, 'p2')).some((a) => a.state === 'completed')) completedAtKill.add(id);
    assert.ok(completedAtKill.size < runIds.length, 'the kill interrupted a node in flight');
    worker = await startWorker(api.env);

    await assertCompleted(http, runIds, 't');
    for (const [i, id] of runIds.entries()) {
      const p1 = await ofNode(id, 'p1');
      const p2 = await ofNode(id, 'p2');
      // The run's task lists the attempt the kill cut off, as lost (its worker could not say).
      const shown = ((await http.get(`/run/${id}/`)).body.tasks as Array<Record<string, unknown>>).find(
        (t) => t.node_id === 'p2',
      )?.failed_attempts as Array<{ attempt: number; start_time: string | null; error: string }>;
      assert.deepEqual(
        shown.map((a) => [a.attempt, a.start_time, a.error]),
        Array.from({ length: (p2[0]?.attempt ?? 1) - 1 }, (_, k) => [k + 1, null, 'The worker running it was lost']),
        `p2 of run ${i}: ${JSON.stringify(p2)}`,
      );
      assert.deepEqual(
        p1.map((a) => [a.state, a.attempt, a.workerPid]),
        [['completed', 1, victim]],
        `p1 of run ${i} ran once`,
      );
      assert.equal(p2.length, 1, `p2 of run ${i} was scheduled once: the restarted worker did not start it anew`);
      if (completedAtKill.has(id))
        assert.deepEqual(
          [p2[0]?.attempt, p2[0]?.workerPid],
          [1, victim],
          `p2 of run ${i} had completed: it did not run again`,
        );
      else
        assert.ok(
          (p2[0]?.attempt ?? 0) >= 2 && p2[0]?.workerPid === worker.process.pid,
          `p2 of run ${i} was interrupted, so it ran again on the new worker: ${JSON.stringify(p2)}`,
        );
    }
    assert.equal(await runsWithStoredTasks(api.models, runIds), CRASH_RUNS, 'every run has its tasks stored');
  });

  it('loses no run when the Temporal server stops and restarts on the same SQLite file', async () => {
    const own: TemporalServer = await onFreePort((port) =>
      startTemporal({
        ...TEMPORAL_DEV_OPTIONS,
        port,
        uiPort: null,
        dbFile: path.join(stack.tmpDir, `restart-${Date.now()}.db`),
        logFile: path.join(stack.tmpDir, 'temporal-restart.log'),
      }),
    );
    try {
      api = await startApi({ SPUR_TEMPORAL_ADDRESS: own.address });
      const http = client(api.baseUrl);
      worker = await startWorker(api.env);
      const wf = (await http.post('/wf/', { name: 'server restart', definition: slowDefinition })).body;
      const runIds: string[] = [];
      for (let i = 0; i < 5; i++)
        runIds.push(
          (await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { tag: `s${i}` } } })).body.id,
        );
      // Every run has reached p2 and some p2 still sleeps when the server goes.
      await until('every run in p2, some still running it', () => attemptsOf(api).inFlightAt(runIds, 'p2'));
      const restarted = await restartTemporal(own);
      own.handle = restarted.handle;
      await assertCompleted(http, runIds, 's');
      for (const [i, id] of runIds.entries())
        assert.deepEqual(
          (await ofNode(id, 'p1')).map((a) => [a.state, a.attempt]),
          [['completed', 1]],
          `p1 of run ${i} ran once`,
        );
      assert.equal(await runsWithStoredTasks(api.models, runIds), 5, 'every run has its tasks stored');
    } finally {
      await worker?.stop();
      worker = undefined;
      await own.handle.stop();
    }
  });

  it('completes a blocking run whose api was killed mid-request; the run is readable afterwards', async () => {
    api = await startApi();
    worker = await startWorker(api.env);
    const apiProcess = await startApiProcess(api.env);
    const wf = (await apiProcess.http.post('/wf/', { name: 'api killed', definition: slowDefinition })).body;
    const pending = apiProcess.http
      .post(`/wf/${wf.id}/run/`, { initial_inputs: { src: { tag: 'a0' } } })
      .catch((err: Error) => err);
    const http = client(api.baseUrl); // another api instance on the same database
    let run = { id: '' };
    await until('the run to reach p2', async () => {
      [run = { id: '' }] = (await http.get(`/wf/${wf.id}/runs/`)).body;
      return run.id !== '' && (await ofNode(run.id, 'p2').catch(() => [])).some((a) => a.state === 'running');
    });
    apiProcess.process.kill('SIGKILL');
    assert.ok((await pending) instanceof Error, 'the client lost its connection');
    const finished = await waitForRun(http, run.id);
    assert.equal(finished.status, 'COMPLETED');
    assert.deepEqual(finished.outputs.p2, { done: 'a0' });
  });
});
