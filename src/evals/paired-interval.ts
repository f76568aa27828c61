/**
 * The difference of two accuracies measured on the same examples, with Newcombe's hybrid score
 * interval for paired proportions (Newcombe 1998, method 10): Wilson score intervals of each
 * accuracy, combined through the phi correlation of the paired outcomes. Closed form, so the same
 * results always give the same interval; it stays inside [-1, 1] and behaves at 0 % and 100 %,
 * where the Wald interval collapses.
 */

/** z for a two-sided 95 % interval. */
const Z95 = 1.959963984540054;

export interface PairedCounts {
  /** Right in both. */
  both: number;
  /** Right with A only. */
  onlyA: number;
  /** Right with B only. */
  onlyB: number;
  /** Wrong in both. */
  neither: number;
}

export interface PairedDelta {
  n: number;
  accuracy_a: number;
  accuracy_b: number;
  /** accuracy_b − accuracy_a. */
  delta: number;
  ci_low: number;
  ci_high: number;
  confidence: number;
  method: string;
}

/** Wilson score interval of k successes in n. */
export function wilson(k: number, n: number, z = Z95): [number, number] {
  if (n === 0) return [0, 1];
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/**
 * The numerator of phi as Newcombe's method 10 takes it: AD − BC, lessened by N/2 when positive
 * (and 0 when within N/2), so a positive correlation never narrows the interval too far.
 */
function correlationTerm(c: PairedCounts, n: number): number {
  const cross = c.both * c.neither - c.onlyA * c.onlyB;
  if (cross > n / 2) return cross - n / 2;
  return cross < 0 ? cross : 0;
}

/** B's accuracy minus A's over the paired examples, with its 95 % interval. */
export function pairedDelta(c: PairedCounts): PairedDelta {
  const n = c.both + c.onlyA + c.onlyB + c.neither;
  const method = 'Newcombe hybrid score interval for paired proportions (method 10), 95 %';
  if (n === 0) return { n, accuracy_a: 0, accuracy_b: 0, delta: 0, ci_low: -1, ci_high: 1, confidence: 0.95, method };
  const rightA = c.both + c.onlyA;
  const rightB = c.both + c.onlyB;
  const pA = rightA / n;
  const pB = rightB / n;
  const [lA, uA] = wilson(rightA, n);
  const [lB, uB] = wilson(rightB, n);
  const denominator = Math.sqrt(rightA * (n - rightA) * rightB * (n - rightB));
  const phi = denominator === 0 ? 0 : correlationTerm(c, n) / denominator;
  const delta = pB - pA;
  const low = delta - Math.sqrt(Math.max(0, (pB - lB) ** 2 - 2 * phi * (pB - lB) * (uA - pA) + (uA - pA) ** 2));
  const high = delta + Math.sqrt(Math.max(0, (uB - pB) ** 2 - 2 * phi * (uB - pB) * (pA - lA) + (pA - lA) ** 2));
  return {
    n,
    accuracy_a: pA,
    accuracy_b: pB,
    delta,
    ci_low: Math.max(-1, low),
    ci_high: Math.min(1, high),
    confidence: 0.95,
    method,
  };
}
