// A rolling restart of every worker under a stream of runs: each worker in turn gets SIGTERM while
// its replacement starts, and no run fails and no model call is made twice, whether the call is a
// regular activity or a short call run as a local activity (timeout_seconds 30). Prometheus-like
// scrapers keep a connection open to every worker's metrics port, as a real one does.
import assert from 'node:assert/strict';
import http from 'node:http';
import { freePort } from '../../scripts/lib/ports';
import { type DrainStack, askOnce, callsFor, echoOf, startDrainStack } from '../support/drain';
import { waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { startWorker, type TestWorker } from '../support/worker';

const WORKERS = 3;
/** Runs at least, started over the restart: every other one blocking (`/run/`), the rest `/start_run/`. */
const RUNS = 60;
const EVERY_MS = 300;
/** Each model call takes this long, so some are in flight whenever a worker is signalled. */
const CALL_MS = 800;

/** A worker with a metrics port that a keep-alive client scrapes until the worker has exited. */
async function scrapedWorker(env: Record<string, string>): Promise<TestWorker> {
  const port = await freePort();
  const worker = await startWorker(env, { SPUR_WORKER_SHUTDOWN_SECONDS: '30', SPUR_METRICS_PORT: String(port) });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  void (async () => {
    while (worker.process.running) {
      await new Promise<void>((resolve) => {
        http
          .get({ host: '127.0.0.1', port, path: '/metrics', agent }, (res) => res.resume().on('end', resolve))
          .on('error', () => resolve());
      });
      await new Promise((r) => setTimeout(r, 200));
    }
    agent.destroy();
  })();
  return worker;
}

describe('e2e: a rolling restart of every worker under load fails no run', function () {
  this.timeout(600_000);
  let stack: DrainStack;
  const workers: TestWorker[] = [];

  before(async () => {
    stack = await startDrainStack();
  });
  after(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await stack?.close();
  });

  it(`${WORKERS} workers replaced one by one while runs keep coming: every run completes, each model call made once (as a regular or a local activity)`, async () => {
    const short = await stack.http.post('/wf/', { name: 'drain short', definition: askOnce({ timeout_seconds: 30 }) });
    assert.equal(short.status, 200, short.text);
    for (let i = 0; i < WORKERS; i++) workers.push(await scrapedWorker(stack.api.env));
    stack.fake.respondWith(() => ({ delayMs: CALL_MS }));

    let restarted = false;
    const started: { x: string; blocking: boolean; answer: Promise<{ status: number; body: any; text: string }> }[] =
      [];
    const load = (async () => {
      for (let i = 0; !restarted || started.length < RUNS; i++) {
        const x = `r${i}`;
        const blocking = i % 2 === 0;
        const route = blocking ? 'run' : 'start_run';
        // Every second pair of runs calls its model as a short call (a local activity).
        const workflowId = i % 4 < 2 ? stack.workflowId : (short.body.id as string);
        const answer = stack.http.post(`/wf/${workflowId}/${route}/`, { initial_inputs: { in: { x } } });
        started.push({ x, blocking, answer });
        await new Promise((r) => setTimeout(r, EVERY_MS));
      }
    })();

    const stopped: number[] = [];
    for (let i = 0; i < WORKERS; i++) {
      const old = workers[i] as TestWorker;
      // Like `docker stop`: the signal goes to the process itself; its replacement starts meanwhile.
      process.kill(old.process.pid, 'SIGTERM');
      const replacement = scrapedWorker(stack.api.env);
      // The bound turns a worker that never exits (a scraper's connection holding it) into a failure.
      await until(`worker ${old.process.pid} to exit`, () => !old.process.running, 120_000);
      assert.equal(await old.process.exited, 0, `worker ${old.process.pid} exited cleanly`);
      stopped.push(old.process.pid);
      workers[i] = await replacement;
    }
    restarted = true;
    await load;

    for (const { x, blocking, answer } of started) {
      const res = await answer;
      assert.equal(res.status, 200, `${x}: ${res.text}`);
      if (blocking) {
        assert.deepEqual(res.body.out, { answer: echoOf(x) }, `${x} answered with its outputs`);
        continue;
      }
      const run = await waitForRun(stack.http, res.body.id, undefined, 180_000);
      assert.equal(run.status, 'COMPLETED', `${x}: ${run.message}`);
      assert.deepEqual((await stack.http.get(`/run/${res.body.id}/`)).body.outputs.out, { answer: echoOf(x) }, x);
    }
    const twice = started.filter(({ x }) => callsFor(stack.fake, x).length !== 1).map(({ x }) => x);
    assert.deepEqual(twice, [], 'runs whose model call was not made exactly once');
    console.log(`      ${started.length} runs over the restart of workers ${stopped.join(', ')}`);
  });
});
