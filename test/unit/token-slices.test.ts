import assert from 'node:assert/strict';
import { getEncoding } from 'js-tiktoken';
import { SLICE_CHARS, countInSlices } from '../../src/usage/token-slices';

describe('unit: prompt tokens are counted in slices', () => {
  const o200k = getEncoding('o200k_base');
  const slicesOf = (text: string) => {
    const slices: string[] = [];
    countInSlices(text, (slice) => slices.push(slice));
    return slices;
  };

  it('cuts before whitespace, so prose counts as it does whole', () => {
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(40) + 'Ünïcödé and emoji 🙂 too.';
    assert.equal(
      countInSlices(prose, (s) => o200k.encode(s).length),
      o200k.encode(prose).length,
    );
  });

  it('never hands the encoder more than SLICE_CHARS, and loses no character', () => {
    for (const text of ['x'.repeat(10_000), `${'a '.repeat(500)}${'y'.repeat(700)} z`, '', ' ', 'short']) {
      const slices = slicesOf(text);
      assert.ok(
        slices.every((s) => s.length > 0 && s.length <= SLICE_CHARS),
        text.slice(0, 20),
      );
      assert.equal(slices.join(''), text);
    }
  });

  it('counts a long word at least as high as whole (the budget errs on the safe side)', () => {
    const word = 'xyzzy'.repeat(200);
    assert.ok(countInSlices(word, (s) => o200k.encode(s).length) >= o200k.encode(word).length);
  });
});
