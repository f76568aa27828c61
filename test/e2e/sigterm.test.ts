import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startApi, type TestApi } from '../support/api';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { waitForRun } from '../support/engine';
import { HOST_WRITING_PYTHON, loggedSleep, readExecLog, until } from '../support/exec-log';
import { l, n } from '../support/graphs';
import { client } from '../support/http';
import { stack } from '../support/stack';
import { startWorker, type TestWorker } from '../support/worker';

const RUNS = 30;
/** The worker's shutdownGraceTime (temporal/worker.ts) plus room for a slow, shared machine. */
const WORKER_EXIT_DEADLINE_MS = 10_000 + 20_000;
/** The api's drain on SIGTERM, shorter than the default 10 s to keep the test short. */
const DRAIN_SECONDS = 8;

/** src → p1 → p2 → out, the Python nodes sleeping `p1Seconds` and `p2Seconds`; out.result = `<x>-p1-p2`. */
function sleepyDefinition(p1Seconds: number, p2Seconds = p1Seconds) {
  return {
    nodes: [
      n('src', 'InputNode', { output_schema: { x: 'string', tag: 'string', log: 'string' } }),
      loggedSleep('p1', p1Seconds, { node: 'src', field: 'x' }, 'y'),
      loggedSleep('p2', p2Seconds, { node: 'p1', field: 'y' }, 'z'),
      n('out', 'OutputNode', { output_map: { result: 'p2.z' } }),
    ],
    // p2 also hangs off src: Python reads tag and log from its direct predecessors only.
    links: [l('src', 'p1'), l('src', 'p2'), l('p1', 'p2'), l('p2', 'out')],
  };
}

/** Resolves with the exit code, or rejects once `ms` have passed. */
function exitWithin(exited: Promise<number | null>, ms: number, what: string): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} still running ${ms} ms after SIGTERM`)), ms)));
  return Promise.race([exited, late]).finally(() => clearTimeout(timer));
}

describe('e2e: SIGTERM under load — a worker drains, the api answers what is in flight', function () {
  this.timeout(240_000);
  let api: TestApi;
  let apiProcess: ApiProcess | undefined;
  const workers: TestWorker[] = [];
  let logFile: string;

  beforeEach(async () => {
    logFile = path.join(stack.tmpDir, `sigterm-${Date.now()}.log`);
    writeFileSync(logFile, '');
    api = await startApi(HOST_WRITING_PYTHON);
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
      const res = await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { x: `x${i}`, tag: `t${i}`, log: logFile } } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      runIds.push(res.body.id);
    }

    // Python started by the victim and not finished yet: activities in flight on it.
    const inFlightOnVictim = () => {
      const events = readExecLog(logFile).filter((e) => e.pid === victim.process.pid);
      const ended = new Set(events.filter((e) => e.phase === 'end').map((e) => `${e.tag} ${e.node}`));
      return events.filter((e) => e.phase === 'start' && !ended.has(`${e.tag} ${e.node}`)).map((e) => `${e.tag} ${e.node}`);
    };
    await until('an activity in flight on the first worker', () => inFlightOnVictim().length > 0);
    const interrupted = inFlightOnVictim();
    // Like `docker stop`: the signal goes to the process itself, not to its group.
    process.kill(victim.process.pid, 'SIGTERM');
    assert.equal(await exitWithin(victim.process.exited, WORKER_EXIT_DEADLINE_MS, 'the worker'), 0, 'a clean exit');

    // Drained, not abandoned: what ran on the victim at SIGTERM finished there, once.
    const log = readExecLog(logFile);
    for (const key of interrupted) {
      const [tag, node] = key.split(' ');
      const ends = log.filter((e) => e.tag === tag && e.node === node && e.phase === 'end');
      assert.deepEqual(ends.map((e) => e.pid), [victim.process.pid], `${key} finished on the stopping worker`);
    }
    assert.equal((await http.get('/health/')).status, 200, 'the api stays healthy');

    const done = await Promise.all(runIds.map((id) => waitForRun(http, id, undefined, 180_000)));
    for (const [i, run] of done.entries()) assert.equal(run.status, 'COMPLETED', `${runIds[i]}: ${run.message}`);
    for (const [i, id] of runIds.entries()) {
      const run = (await http.get(`/run/${id}/`)).body;
      assert.deepEqual(run.outputs.out, { result: `x${i}-p1-p2` }, id);
      assert.ok(run.tasks.every((t: { status: string }) => t.status === 'COMPLETED'), id);
    }
    const survivorWork = readExecLog(logFile).filter((e) => e.pid === survivor.process.pid && e.phase === 'end');
    assert.ok(survivorWork.length > 0, 'the other worker carried on');
    assert.equal((await http.get('/health/')).status, 200);
  });

  it('the api sent SIGTERM stops accepting, answers the requests in flight, and exits 0', async () => {
    workers.push(await startWorker(api.env));
    const http = apiProcess!.http;
    const quick = (await http.post('/wf/', { name: 'quick', definition: sleepyDefinition(3, 0.2) })).body;
    // Longer than the drain (DRAIN_SECONDS): the api must not wait for this run.
    const slow = (await http.post('/wf/', { name: 'slow', definition: sleepyDefinition(15) })).body;
    const settled = new Set<string>();
    const track = <T>(name: string, p: Promise<T>) => p.finally(() => settled.add(name));
    const long = track('long', http.post(`/wf/${slow.id}/run/`, { initial_inputs: { src: { x: 'a', tag: 'long', log: logFile } } }));
    await until('the long run to reach p1', () => readExecLog(logFile).some((e) => e.tag === 'long'));
    const short = track('short', http.post(`/wf/${quick.id}/run/`, { initial_inputs: { src: { x: 'b', tag: 'short', log: logFile } } }));
    await until('the short run to reach p1', () => readExecLog(logFile).some((e) => e.tag === 'short'));
    assert.equal(settled.size, 0, 'both requests are in flight');
    // Like `docker stop`: the signal goes to the process itself, not to its group.
    process.kill(apiProcess!.process.pid, 'SIGTERM');

    await until('new connections to be refused', () => fetch(`${apiProcess!.baseUrl}/health/`).then(() => false, () => true), 10_000);
    assert.ok(!settled.has('long'), 'refused while a request was still in flight');
    const shortAnswer = await short;
    assert.equal(shortAnswer.status, 200, 'a run that ends within the drain gets its outputs');
    assert.deepEqual(shortAnswer.body.out, { result: 'b-p1-p2' });
    const longAnswer = await long;
    assert.equal(longAnswer.status, 202, JSON.stringify(longAnswer.body));
    assert.equal(longAnswer.body.status, 'RUNNING', 'answered before the run ended, with its id to poll');
    assert.equal(await exitWithin(apiProcess!.process.exited, 30_000, 'the api'), 0);

    // The run goes on without that api; any other instance on the same database reports it.
    const finished = await waitForRun(client(api.baseUrl), longAnswer.body.run_id, undefined, 90_000);
    assert.equal(finished.status, 'COMPLETED', finished.message);
    assert.deepEqual(finished.outputs.out, { result: 'a-p1-p2' });
  });
});
