import assert from 'node:assert/strict';
import { startApi, type TestApi } from '../support/api';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { l, n } from '../support/graphs';
import { client } from '../support/http';
import { type NodeAttempt, attemptOf, nodeAttempts, sleeper } from '../support/node-attempts';
import { startWorker, type TestWorker } from '../support/worker';

/** Enough runs to keep both workers busy when one is stopped. */
const RUNS = 16;
/** The api's drain on SIGTERM: room for the short run's last second on a slow, shared machine. */
const DRAIN_SECONDS = 20;

/** src → p1 → p2 → out, the Python nodes sleeping `p1Seconds` and `p2Seconds`; out.result = `<x>-p1-p2`. */
function sleepyDefinition(p1Seconds: number, p2Seconds = p1Seconds) {
  return {
    nodes: [
      n('src', 'InputNode', { output_schema: { x: 'string' } }),
      sleeper('p1', p1Seconds, { node: 'src', field: 'x' }, 'y'),
      sleeper('p2', p2Seconds, { node: 'p1', field: 'y' }, 'z'),
      n('out', 'OutputNode', { output_map: { result: 'p2.z' } }),
    ],
    links: [l('src', 'p1'), l('p1', 'p2'), l('p2', 'out')],
  };
}

describe('e2e: SIGTERM under load — a worker drains, the api answers what is in flight', function () {
  this.timeout(240_000);
  let api: TestApi;
  let apiProcess: ApiProcess | undefined;
  const workers: TestWorker[] = [];
  const attempts = (runId: string) => nodeAttempts(api.temporal, api.config.temporal.workflowIdPrefix, runId);

  beforeEach(async () => {
    api = await startApi();
    apiProcess = await startApiProcess({ ...api.env, SPUR_SHUTDOWN_DRAIN_SECONDS: String(DRAIN_SECONDS) });
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await apiProcess?.process.stop();
    await api?.close();
  });

  it(`a worker sent SIGTERM mid-activity finishes its work and exits; all ${RUNS} runs complete`, async () => {
    workers.push(await startWorker(api.env), await startWorker(api.env));
    const [victim, survivor] = workers as [TestWorker, TestWorker];
    const http = apiProcess!.http;
    const wf = (await http.post('/wf/', { name: 'sigterm load', definition: sleepyDefinition(0.8) })).body;
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const res = await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { x: `x${i}` } } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      runIds.push(res.body.id);
    }

    // Nodes the victim has taken and not finished: activities in flight on it, as Temporal sees them.
    let interrupted: { runId: string; node: string }[] = [];
    await until('an activity in flight on the first worker', async () => {
      const all = await Promise.all(runIds.map(async (runId) => ({ runId, list: await attempts(runId) })));
      interrupted = all.flatMap(({ runId, list }) =>
        list
          .filter((a) => a.state === 'running' && a.workerPid === victim.process.pid)
          .map((a) => ({ runId, node: a.node })),
      );
      return interrupted.length > 0;
    });
    // Like `docker stop`: the signal goes to the process itself, not to its group. A worker that
    // never stops fails on the suite's timeout.
    process.kill(victim.process.pid, 'SIGTERM');
    assert.equal(await victim.process.exited, 0, 'a clean exit');
    assert.equal((await http.get('/health/')).status, 200, 'the api stays healthy');

    const done = await Promise.all(runIds.map((id) => waitForRun(http, id, undefined, 180_000)));
    for (const [i, run] of done.entries()) assert.equal(run.status, 'COMPLETED', `${runIds[i]}: ${run.message}`);
    const finished = new Map<string, NodeAttempt[]>();
    for (const [i, id] of runIds.entries()) {
      const run = (await http.get(`/run/${id}/`)).body;
      assert.deepEqual(run.outputs.out, { result: `x${i}-p1-p2` }, id);
      assert.ok(
        run.tasks.every((t: { status: string }) => t.status === 'COMPLETED'),
        id,
      );
      finished.set(id, await attempts(id));
    }
    // Drained, not abandoned: what ran on the victim at SIGTERM finished there, in its first attempt.
    for (const { runId, node } of interrupted) {
      const a = attemptOf(finished.get(runId) ?? [], node);
      assert.deepEqual(
        a && { state: a.state, attempt: a.attempt, workerPid: a.workerPid },
        { state: 'completed', attempt: 1, workerPid: victim.process.pid },
        `${runId} ${node} finished on the stopping worker, once`,
      );
    }
    const survivorWork = [...finished.values()].flat().filter((a) => a.workerPid === survivor.process.pid);
    assert.ok(survivorWork.length > 0, 'the other worker carried on');
    assert.equal((await http.get('/health/')).status, 200);
  });

  it('the api sent SIGTERM stops accepting, answers the requests in flight, and exits 0', async () => {
    workers.push(await startWorker(api.env));
    const http = apiProcess!.http;
    const quick = (await http.post('/wf/', { name: 'quick', definition: sleepyDefinition(1, 0.2) })).body;
    // Longer than the drain (DRAIN_SECONDS): the api must not wait for this run.
    const slow = (await http.post('/wf/', { name: 'slow', definition: sleepyDefinition(25, 0.2) })).body;
    const settled = new Set<string>();
    const track = <T>(name: string, p: Promise<T>) => p.finally(() => settled.add(name));
    // Another instance on the same database: it sees the runs while the one under test drains.
    const other = client(api.baseUrl);
    const reachP1 = async (workflowId: string) => {
      let runId = '';
      await until('the run to reach p1', async () => {
        runId = (await other.get(`/wf/${workflowId}/runs/?page_size=1`)).body[0]?.id ?? '';
        return (
          runId !== '' && (await attempts(runId).catch(() => [])).some((a) => a.node === 'p1' && a.state === 'running')
        );
      });
      return runId;
    };
    const long = track('long', http.post(`/wf/${slow.id}/run/`, { initial_inputs: { src: { x: 'a' } } }));
    const longRun = await reachP1(slow.id);
    const short = track('short', http.post(`/wf/${quick.id}/run/`, { initial_inputs: { src: { x: 'b' } } }));
    await reachP1(quick.id);
    assert.equal(settled.size, 0, 'both requests are in flight');
    // Like `docker stop`: the signal goes to the process itself, not to its group.
    process.kill(apiProcess!.process.pid, 'SIGTERM');

    await until(
      'new connections to be refused',
      () =>
        fetch(`${apiProcess!.baseUrl}/health/`).then(
          () => false,
          () => true,
        ),
      30_000,
    );
    assert.ok(!settled.has('long'), 'refused while a request was still in flight');
    const shortAnswer = await short;
    assert.equal(shortAnswer.status, 200, 'a run that ends within the drain gets its outputs');
    assert.deepEqual(shortAnswer.body.out, { result: 'b-p1-p2' });
    const longAnswer = await long;
    assert.equal(longAnswer.status, 202, JSON.stringify(longAnswer.body));
    assert.equal(longAnswer.body.status, 'RUNNING', 'answered with its id to poll');
    assert.equal(longAnswer.body.run_id, longRun);
    assert.equal(
      attemptOf(await attempts(longRun), 'p1')?.state,
      'running',
      "answered before the run's first node had finished",
    );
    assert.equal(await apiProcess!.process.exited, 0);

    // The run goes on without that api; any other instance on the same database reports it.
    const finished = await waitForRun(client(api.baseUrl), longAnswer.body.run_id, undefined, 90_000);
    assert.equal(finished.status, 'COMPLETED', finished.message);
    assert.deepEqual(finished.outputs.out, { result: 'a-p1-p2' });
  });
});
