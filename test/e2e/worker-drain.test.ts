// SIGTERM to a worker process with a model call in flight: it stops taking work at once, lets the
// call finish for up to SPUR_WORKER_SHUTDOWN_SECONDS, and exits 0; a call still running then is
// cut and made again on another worker, and the run completes. The fake provider counts the calls.
import assert from 'node:assert/strict';
import { type DrainStack, callsFor, echoOf, startDrainStack } from '../support/drain';
import { waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { startWorker, type TestWorker } from '../support/worker';

/** Longer than the grace the worker had before the setting (a fixed 10 s): a call it must outlast. */
const PAST_THE_OLD_GRACE_MS = 13_000;

describe('e2e: a worker sent SIGTERM drains within SPUR_WORKER_SHUTDOWN_SECONDS', function () {
  this.timeout(240_000);
  let stack: DrainStack;
  const workers: TestWorker[] = [];
  let release: () => void = () => undefined;

  beforeEach(async () => {
    // Only the worker's own shutdown may end a call: Temporal would retry one whose heartbeats
    // stopped after 20 s (the default), this one after 10 minutes.
    stack = await startDrainStack({ heartbeat_timeout_seconds: 600 });
  });
  afterEach(async () => {
    release();
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await stack?.close();
  });

  /** Starts a run of `x`, waits until a worker runs its model call, and says which worker that is. */
  async function runHeldOnAWorker(x: string): Promise<{ runId: string; victim: TestWorker; survivor: TestWorker }> {
    const started = await stack.http.post(`/wf/${stack.workflowId}/start_run/`, { initial_inputs: { in: { x } } });
    assert.equal(started.status, 200, started.text);
    const runId: string = started.body.id;
    let pid: number | null = null;
    await until('the model call in flight on a worker', async () => {
      const a = await stack.askAttempt(runId);
      pid = a?.state === 'running' ? a.workerPid : null;
      return pid !== null && callsFor(stack.fake, x).length === 1;
    });
    const victim = workers.find((w) => w.process.pid === pid);
    const survivor = workers.find((w) => w.process.pid !== pid);
    assert.ok(victim && survivor, `the call runs on one of the test's workers (pid ${pid})`);
    return { runId, victim, survivor };
  }

  it('a call longer than the old fixed grace finishes on the stopping worker, once; new work goes to the other', async () => {
    const grace = { SPUR_WORKER_SHUTDOWN_SECONDS: '90' };
    workers.push(await startWorker(stack.api.env, grace), await startWorker(stack.api.env, grace));
    const held = new Promise<void>((resolve) => (release = resolve));
    stack.fake.respondWith((r) => (callsFor(stack.fake, 'held').includes(r) ? { heldUntil: held } : undefined));
    const { runId, victim, survivor } = await runHeldOnAWorker('held');

    // Like `docker stop`: the signal goes to the process itself.
    process.kill(victim.process.pid, 'SIGTERM');
    const signalledAt = Date.now();
    // Work started after the signal runs on the other worker while this one drains.
    const next = await stack.http.post(`/wf/${stack.workflowId}/start_run/`, { initial_inputs: { in: { x: 'next' } } });
    assert.equal(next.status, 200, next.text);
    const nextRun = await waitForRun(stack.http, next.body.id, undefined, 120_000);
    assert.equal(nextRun.status, 'COMPLETED', nextRun.message);
    assert.equal((await stack.askAttempt(next.body.id))?.workerPid, survivor.process.pid, 'new work went elsewhere');
    assert.ok(victim.process.running, 'the stopping worker still holds its call');
    // A wait, not a measurement: the held call is let go only after the old 10 s grace has passed.
    await new Promise((r) => setTimeout(r, Math.max(0, signalledAt + PAST_THE_OLD_GRACE_MS - Date.now())));
    release();

    assert.equal(await victim.process.exited, 0, 'a clean exit once its call has finished');
    const run = await waitForRun(stack.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', run.message);
    assert.deepEqual((await stack.http.get(`/run/${runId}/`)).body.outputs.out, { answer: echoOf('held') });
    assert.equal(callsFor(stack.fake, 'held').length, 1, 'the model was called once');
    assert.deepEqual(
      await stack.askAttempt(runId),
      { node: 'ask', attempt: 1, workerPid: victim.process.pid, state: 'completed', startedAt: null },
      'finished by the worker that was stopping, in its first attempt',
    );
  });

  it('a call still running after the grace is cut, made again on another worker, and the run completes', async () => {
    const grace = { SPUR_WORKER_SHUTDOWN_SECONDS: '2' };
    workers.push(await startWorker(stack.api.env, grace), await startWorker(stack.api.env, grace));
    // The first call never gets an answer from the provider; any later one is answered at once.
    const never = new Promise<void>((resolve) => (release = resolve));
    stack.fake.respondWith((r) => (callsFor(stack.fake, 'cut')[0] === r ? { heldUntil: never } : undefined));
    const { runId, victim, survivor } = await runHeldOnAWorker('cut');

    process.kill(victim.process.pid, 'SIGTERM');
    // The bound turns a worker that never lets go of the call into a failure, on a busy host too.
    await until('the worker to exit after cutting its call', () => !victim.process.running, 90_000);
    assert.equal(await victim.process.exited, 0, 'a clean exit, its call cut after the grace');

    const run = await waitForRun(stack.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', run.message);
    assert.deepEqual((await stack.http.get(`/run/${runId}/`)).body.outputs.out, { answer: echoOf('cut') });
    const calls = callsFor(stack.fake, 'cut');
    assert.deepEqual(
      calls.map((c) => c.answered?.status ?? 'cut'),
      ['cut', 200],
      'the cut call, then one answered call',
    );
    const ask = await stack.askAttempt(runId);
    assert.deepEqual(
      ask && { attempt: ask.attempt, workerPid: ask.workerPid, state: ask.state },
      { attempt: 2, workerPid: survivor.process.pid, state: 'completed' },
      'retried on the other worker',
    );
  });
});
