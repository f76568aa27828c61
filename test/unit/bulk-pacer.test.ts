import assert from 'node:assert/strict';
import { createBulkPacer } from '../../temporal/activities/bulk-pacer';
import type { CpuSampler } from '../../temporal/activities/host-load';

/** Readings of the host's CPU the test hands the pacer one at a time, as the sampler would every 100 ms. */
function drivenCpu() {
  const listeners: ((busy: number) => void)[] = [];
  const sampler: CpuSampler = { listen: (l) => void listeners.push(l) };
  return { sampler, read: (busy: number) => listeners.forEach((l) => l(busy)) };
}

const never = new AbortController().signal;
const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('unit: the bulk pacer', () => {
  it('keeps to its floor while the host is past the target and work needs the room, and ramps once it is below', async () => {
    const cpu = drivenCpu();
    const pacer = createBulkPacer(cpu.sampler, { targetCpu: 0.5, floor: 2, ceiling: 8 });
    const got = [pacer.acquire(never), pacer.acquire(never)];
    const third = pacer.acquire(never);
    assert.equal(await settled(Promise.all(got)), true);
    cpu.read(0.9);
    assert.equal(await settled(third), false, 'past the target: two at most');
    cpu.read(0.3);
    // Below the target with work waiting: the allowance grows (2 → 3), so the third gets its place.
    assert.equal(await settled(third), true);
  });

  it('takes more while nothing else needs the room, however busy the host', async () => {
    const cpu = drivenCpu();
    const pacer = createBulkPacer(cpu.sampler, { targetCpu: 0.5, floor: 1, ceiling: 8, needed: () => false });
    await pacer.acquire(never);
    const second = pacer.acquire(never);
    cpu.read(0.99);
    assert.equal(await settled(second), true);
  });

  it('wakes waiters first come, first served, as places free up', async () => {
    const pacer = createBulkPacer(drivenCpu().sampler, { targetCpu: 0.5, floor: 1, ceiling: 1 });
    await pacer.acquire(never);
    const order: string[] = [];
    const a = pacer.acquire(never).then(() => order.push('a'));
    const b = pacer.acquire(never).then(() => order.push('b'));
    pacer.release();
    await a;
    assert.deepEqual(order, ['a']);
    pacer.release();
    await b;
    assert.deepEqual(order, ['a', 'b']);
  });

  it('refuses a waiter whose signal aborts, which then holds no place', async () => {
    const pacer = createBulkPacer(drivenCpu().sampler, { targetCpu: 0.5, floor: 1, ceiling: 1 });
    await pacer.acquire(never);
    const cancel = new AbortController();
    const cut = pacer.acquire(cancel.signal);
    const next = pacer.acquire(never);
    cancel.abort(new Error('cancelled'));
    await assert.rejects(cut, /cancelled/);
    pacer.release();
    assert.equal(await settled(next), true, 'the place went to the next waiter');
    assert.equal(pacer.tryAcquire(), false, 'and only one place is taken');
  });

  it('at a target of 1, holds to its ceiling alone and never reads the CPU', async () => {
    let listened = false;
    const sampler: CpuSampler = { listen: () => void (listened = true) };
    const pacer = createBulkPacer(sampler, { targetCpu: 1, floor: 1, ceiling: 3 });
    for (let i = 0; i < 3; i++) await pacer.acquire(never);
    assert.equal(pacer.tryAcquire(), false);
    assert.equal(listened, false);
  });
});
