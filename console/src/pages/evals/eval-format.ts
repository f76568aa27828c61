import type { Tally } from './eval-types';

/** A share as a percentage with one decimal: 0.8333 → "83.3 %". */
export const percent = (share: number): string => `${(share * 100).toFixed(1)} %`;

/** A difference of shares in percentage points, signed: 0.125 → "+12.5 pp", −0.1 → "−10.0 pp". */
export function points(difference: number): string {
  const value = (Math.abs(difference) * 100).toFixed(1);
  if (Number(value) === 0) return `±${value} pp`;
  return `${difference > 0 ? '+' : '−'}${value} pp`;
}

/** A score as counted: "4 of 8 right (50.0 %)". */
export const score = (tally: Tally): string =>
  `${tally.correct_predictions} of ${tally.total_samples} right (${percent(tally.accuracy)})`;
