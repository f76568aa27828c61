import assert from 'node:assert/strict';
import { busyFraction, type CoreTimes } from '../../temporal/activities/host-load';

const core = (user: number, sys: number, idle: number, nice = 0, irq = 0): CoreTimes => ({
  user,
  nice,
  sys,
  idle,
  irq,
});

describe('unit: the host CPU fraction bulk work gives way by (busyFraction)', () => {
  it('counts user, nice, sys and irq time as busy and idle time as not, over every core', () => {
    // Core 0: 300 ms busy (200 user + 50 sys + 30 nice + 20 irq), 100 ms idle.
    // Core 1: 100 ms busy (100 user), 300 ms idle. Together: 400 of 800 ms.
    const before = [core(1000, 500, 9000, 10, 5), core(2000, 700, 8000)];
    const after = [core(1200, 550, 9100, 40, 25), core(2100, 700, 8300)];
    assert.equal(busyFraction(before, after), 0.5);
  });

  it('is 1 for cores that never idled and 0 for cores that only idled', () => {
    assert.equal(busyFraction([core(0, 0, 0)], [core(70, 30, 0)]), 1);
    assert.equal(busyFraction([core(5, 5, 0)], [core(5, 5, 250)]), 0);
  });

  it('is null when no time passed between the readings, and ignores a core the first reading lacks', () => {
    assert.equal(busyFraction([core(1, 1, 1)], [core(1, 1, 1)]), null);
    assert.equal(busyFraction([core(0, 0, 0)], [core(10, 0, 30), core(99, 99, 0)]), 0.25);
  });
});
