import assert from 'node:assert/strict';
import { candidateNames, timestampSuffixedName } from '../../src/modules/workflows/unique-name.js';

function take<T>(gen: Iterator<T>, n: number): T[] {
  const out: T[] = [];
  for (let i = 0; i < n; i++) {
    const next = gen.next();
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

describe('unique-name', () => {
  describe('timestampSuffixedName', () => {
    it('appends local date and time, zero padded', () => {
      assert.equal(timestampSuffixedName('My Flow', new Date(2025, 0, 2, 3, 4, 5)), 'My Flow 2025-01-02 03:04:05');
    });

    it('uses the 24-hour clock and two-digit fields', () => {
      assert.equal(timestampSuffixedName('x', new Date(2024, 11, 31, 23, 59, 58)), 'x 2024-12-31 23:59:58');
      assert.equal(timestampSuffixedName('x', new Date(2025, 5, 7, 0, 0, 0)), 'x 2025-06-07 00:00:00');
      assert.equal(timestampSuffixedName('x', new Date(2025, 9, 10, 12, 30, 9)), 'x 2025-10-10 12:30:09');
    });

    it('ignores milliseconds', () => {
      assert.equal(timestampSuffixedName('n', new Date(2025, 2, 3, 4, 5, 6, 999)), 'n 2025-03-03 04:05:06');
    });

    it('keeps the name as given, with exactly one space before the stamp', () => {
      assert.equal(timestampSuffixedName(' Wörk 😀 ', new Date(2025, 0, 2, 3, 4, 5)), ' Wörk 😀  2025-01-02 03:04:05');
      assert.equal(timestampSuffixedName('', new Date(2025, 0, 2, 3, 4, 5)), ' 2025-01-02 03:04:05');
    });
  });

  describe('candidateNames', () => {
    const now = new Date(2025, 0, 2, 3, 4, 5);

    it('yields the name, then the stamped name, then counters from 2', () => {
      assert.deepEqual(take(candidateNames('Flow', now), 5), [
        'Flow',
        'Flow 2025-01-02 03:04:05',
        'Flow 2025-01-02 03:04:05 (2)',
        'Flow 2025-01-02 03:04:05 (3)',
        'Flow 2025-01-02 03:04:05 (4)',
      ]);
    });

    it('never runs out and never repeats', () => {
      const names = take(candidateNames('Flow', now), 100);
      assert.equal(names.length, 100);
      assert.equal(new Set(names).size, 100);
      assert.equal(names[99], 'Flow 2025-01-02 03:04:05 (99)');
    });

    it('stamps every candidate with the same time', () => {
      const names = take(candidateNames('a', now), 4).slice(1);
      for (const name of names) assert.ok(name.startsWith('a 2025-01-02 03:04:05'), name);
    });
  });
});
