import assert from 'node:assert/strict';
import { boundedCall } from '../../src/nodes/bounded-regex';

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

  it('stops a call that spends its time working (catastrophic backtracking) once, without a second try', () => {
    let calls = 0;
    const run = boundedCall(() => {
      calls++;
      return /^(a+)+$/.test(`${'a'.repeat(40)}!`);
    }, 50);
    assert.deepEqual(run, { ok: false });
    assert.equal(calls, 1);
  });
});
