import assert from 'node:assert/strict';
import { pairedDelta, wilson } from '../../src/evals/paired-interval';

const close = (actual: number, expected: number, places = 4) =>
  assert.ok(Math.abs(actual - expected) < 10 ** -places, `${actual} ≠ ${expected}`);

describe('unit: the paired accuracy interval', () => {
  it("gives Wilson's score interval for one accuracy (Newcombe's 81/263 example: 0.2553 to 0.3662)", () => {
    const [low, high] = wilson(81, 263);
    close(low, 0.2553);
    close(high, 0.3662);
  });

  // Newcombe (1998), "Improved confidence intervals for the difference between binomial proportions
  // based on paired data", Statistics in Medicine 17:2635–2650, Table II, method 10: his examples
  // (a)–(d) as e (both positive), f (first only), g (second only), h (neither), and the published
  // 95 % limits for θ = (f − g) / n. Version B is his first classification here, so the delta is θ.
  const NEWCOMBE_TABLE_II: [string, [number, number, number, number], [number, number]][] = [
    ['(a)', [36, 12, 2, 0], [0.0569, 0.3404]],
    ['(b)', [18, 12, 2, 18], [0.0562, 0.329]],
    ['(c)', [53, 0, 0, 1], [-0.0729, 0.0729]],
    ['(d)', [0, 30, 0, 0], [0.8395, 1]],
  ];
  for (const [example, [e, f, g, h], [low, high]] of NEWCOMBE_TABLE_II)
    it(`gives the limits Newcombe published for his paired example ${example}: ${low} to ${high}`, () => {
      const d = pairedDelta({ both: e, onlyB: f, onlyA: g, neither: h });
      close(d.delta, (f - g) / (e + f + g + h), 12);
      close(d.ci_low, low);
      close(d.ci_high, high);
    });

  it('brackets the delta, stays within [-1, 1], and is narrower for positively correlated outcomes', () => {
    const independent = pairedDelta({ both: 10, onlyA: 10, onlyB: 10, neither: 10 });
    const correlated = pairedDelta({ both: 18, onlyA: 2, onlyB: 2, neither: 18 });
    for (const d of [independent, correlated]) {
      assert.equal(d.delta, 0);
      assert.ok(d.ci_low < 0 && d.ci_high > 0);
    }
    assert.ok(correlated.ci_high - correlated.ci_low < independent.ci_high - independent.ci_low);
    const extreme = pairedDelta({ both: 0, onlyA: 0, onlyB: 4, neither: 0 });
    assert.equal(extreme.delta, 1);
    assert.equal(extreme.ci_high, 1);
    assert.ok(extreme.ci_low > 0 && extreme.ci_low < 1);
  });

  it('takes B minus A: swapping the versions mirrors the interval', () => {
    const ab = pairedDelta({ both: 2, onlyA: 0, onlyB: 3, neither: 1 });
    const ba = pairedDelta({ both: 2, onlyA: 3, onlyB: 0, neither: 1 });
    close(ab.delta, -ba.delta, 12);
    close(ab.ci_low, -ba.ci_high, 12);
    close(ab.ci_high, -ba.ci_low, 12);
  });

  it('says nothing is known with no paired examples', () => {
    const none = pairedDelta({ both: 0, onlyA: 0, onlyB: 0, neither: 0 });
    assert.deepEqual([none.n, none.ci_low, none.ci_high], [0, -1, 1]);
  });
});
