import assert from 'node:assert/strict';
import { boundedCall, wasStarved } from '../../src/nodes/bounded-regex';

/** Blocks the thread for `ms` without using CPU: what a starved process looks like from inside. */
function stall(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('boundedCall: a wall-time limit that tells starvation from work', () => {
  it('runs a call stopped while it used little CPU once more, and answers its value', () => {
    let calls = 0;
    const run = boundedCall(() => {
      calls++;
      if (calls === 1) stall(150);
      return 'done';
    }, 50);
    assert.deepEqual(run, { ok: true, value: 'done' });
    assert.equal(calls, 2);
  });

  it('stops a call that spends its time working (catastrophic backtracking), trying it at most twice', () => {
    let calls = 0;
    const run = boundedCall(() => {
      calls++;
      return /^(a+)+$/.test(`${'a'.repeat(40)}!`);
    }, 50);
    assert.deepEqual(run, { ok: false });
    // Once on an idle host; a second time where the host starved the first try.
    assert.ok(calls === 1 || calls === 2, String(calls));
  });

  it('takes a stop with under half the limit in CPU for starvation, and one with more for work', () => {
    assert.equal(wasStarved({ user: 10_000, system: 5_000 }, 50), true);
    assert.equal(wasStarved({ user: 20_000, system: 5_000 }, 50), false);
    assert.equal(wasStarved({ user: 200_000, system: 0 }, 250), false);
  });
});
