import assert from 'node:assert/strict';
import { eachAtMost } from '../../src/at-most-at-once';

describe('eachAtMost', () => {
  it('runs every item once, starting them in order and never more than the limit at a time', async () => {
    const started: number[] = [];
    let running = 0;
    let most = 0;
    await eachAtMost([...Array(20).keys()], 3, async (item) => {
      started.push(item);
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, item % 4));
      running--;
    });
    assert.deepEqual(started, [...Array(20).keys()]);
    assert.equal(most, 3);
  });

  it('runs nothing for no items, and all of them at once when they are fewer than the limit', async () => {
    let calls = 0;
    await eachAtMost([], 3, async () => void calls++);
    assert.equal(calls, 0);
    let running = 0;
    let most = 0;
    await eachAtMost([1, 2], 7, async () => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
    });
    assert.equal(most, 2);
  });

  it('rejects with the failure of an item', async () => {
    await assert.rejects(
      eachAtMost([1, 2, 3], 2, async (item) => {
        if (item === 2) throw new Error('item 2 failed');
      }),
      /item 2 failed/,
    );
  });
});
