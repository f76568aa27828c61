/** Latency summary of one phase, in milliseconds. Percentiles by nearest rank. */
export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** The p-th percentile by nearest rank of samples in any order. */
export function percentileOf(samples: readonly number[], p: number): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    p,
  );
}

/** The middle value by nearest rank (the lower of the two middle ones of an even count). */
export function median(samples: readonly number[]): number {
  return percentileOf(samples, 50);
}

export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/** Milliseconds since `start` (a `process.hrtime.bigint()` reading). */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
