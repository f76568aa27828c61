import assert from 'node:assert/strict';
import { type ScorerTools, score } from '../../src/evals/scorers';

// The `json_equal` scorer (a suite made from runs scores with it by default): equal as JSON values.
const unused: ScorerTools = {
  judge: () => Promise.reject(new Error('no judge here')),
  python: () => Promise.reject(new Error('no Python here')),
};
const verdict = (output: unknown, answer: unknown) =>
  score({ type: 'json_equal' }, { output, answer, row: {} }, unused);

describe('unit: the json_equal scorer', () => {
  it('objects are equal whatever the order of their keys, at every level', async () => {
    const v = await verdict({ b: 1, a: [1, { d: 2, c: 3 }] }, { a: [1, { c: 3, d: 2 }], b: 1 });
    assert.equal(v.correct, true);
    assert.equal(v.predicted, '{"a":[1,{"c":3,"d":2}],"b":1}');
  });

  it('arrays keep their order, and a string is not the number it spells', async () => {
    assert.equal((await verdict([1, 2], [2, 1])).correct, false);
    assert.equal((await verdict('1', 1)).correct, false);
    assert.equal((await verdict(null, null)).correct, true);
  });

  it('a run with no output is wrong, and strings are shown as they are', async () => {
    const none = await verdict(undefined, 'x');
    assert.deepEqual([none.correct, none.predicted, none.expected], [false, '', 'x']);
    const text = await verdict('same', 'same');
    assert.deepEqual([text.correct, text.predicted, text.expected], [true, 'same', 'same']);
  });
});
