import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { BOUNDED_CALL_TRIES, boundedCall, threadCpuMicros, wasStarved } from '../../src/nodes/bounded-regex';

/**
 * Blocks the thread for `ms` without using CPU: what a starved process looks like from inside. The
 * limits around it are long enough that a garbage collection in this (the whole unit suite's) thread
 * during a stall stays under half of one, which would count as work.
 */
function stall(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('boundedCall: a wall-time limit that tells starvation from work', () => {
  it('runs a call stopped while it used little CPU again, and answers its value', () => {
    let calls = 0;
    const run = boundedCall(() => {
      calls++;
      if (calls === 1) stall(600);
      return 'done';
    }, 200);
    assert.deepEqual(run, { ok: true, value: 'done' });
    // The stalled try and the one that answered; a host loaded enough to starve a try may add one.
    assert.ok(calls >= 2 && calls <= BOUNDED_CALL_TRIES, String(calls));
  });

  it(`stops a call starved at every try after ${BOUNDED_CALL_TRIES} tries`, () => {
    let calls = 0;
    const run = boundedCall(() => {
      calls++;
      stall(300);
      return 'never';
    }, 100);
    assert.deepEqual(run, { ok: false });
    assert.equal(calls, BOUNDED_CALL_TRIES);
  });

  it("reads the calling thread's CPU only: a sibling thread working while this one waits adds nothing", async () => {
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const spinner = new Worker(
      'const { workerData: f } = require("node:worker_threads"); while (Atomics.load(f, 0) === 0);',
      { eval: true, workerData: flag },
    );
    await new Promise((resolve) => spinner.once('online', resolve));
    try {
      const thread = threadCpuMicros();
      const processBefore = process.cpuUsage();
      const processUsed = () => {
        const used = process.cpuUsage(processBefore);
        return used.user + used.system;
      };
      // This thread waits until the process (the spinner) has worked 60 ms, however loaded the host.
      for (const deadline = Date.now() + 10_000; processUsed() < 60_000 && Date.now() < deadline;) stall(10);
      assert.ok(processUsed() >= 60_000, `the spinner got ${processUsed()} µs`);
      const waited = threadCpuMicros() - thread;
      assert.ok(waited < 20_000, `this thread's count grew ${waited} µs while it waited`);
    } finally {
      Atomics.store(flag, 0, 1);
      await spinner.terminate();
    }
  });

  it("reads the calling thread's CPU time growing as it works", () => {
    const before = threadCpuMicros();
    let x = 0;
    // Bounded by the clock only to fail rather than hang: a loaded host gets there later.
    for (const deadline = Date.now() + 10_000; threadCpuMicros() - before < 30_000 && Date.now() < deadline;)
      for (let i = 0; i < 10_000; i++) x += Math.sqrt(i);
    assert.ok(x > 0);
    assert.ok(threadCpuMicros() - before >= 30_000);
  });

  it('stops a call that spends its time working (catastrophic backtracking)', () => {
    let calls = 0;
    const run = boundedCall(() => {
      calls++;
      return /^(a+)+$/.test(`${'a'.repeat(40)}!`);
    }, 50);
    assert.deepEqual(run, { ok: false });
    // Once on an idle host; again only where the host starved a try.
    assert.ok(calls >= 1 && calls <= BOUNDED_CALL_TRIES, String(calls));
  });

  it('takes a stop with under half the limit in CPU for starvation, and one with more for work', () => {
    assert.equal(wasStarved(15_000, 50), true);
    assert.equal(wasStarved(25_000, 50), false);
    assert.equal(wasStarved(200_000, 250), false);
  });
});
