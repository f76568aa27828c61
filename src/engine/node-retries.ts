/**
 * How many times an I/O node is tried: `max_retries` counts retries after the first try (numeric
 * text accepted, fractions rounded down); anything else, negatives included, means the default,
 * because 0 attempts would mean "retry forever" to Temporal. Capped at 20.
 */
export function nodeAttempts(config: Record<string, unknown>): number {
  const raw =
    typeof config.max_retries === 'number' || typeof config.max_retries === 'string'
      ? Number(config.max_retries)
      : Number.NaN;
  const retries = Number.isFinite(raw) && raw >= 0 && String(config.max_retries).trim() !== '' ? Math.floor(raw) : 3;
  return Math.min(retries + 1, 20);
}

/** Backoff between tries of a node: 1 s, doubling, at most 60 s (the activity retry policy's). */
export const NODE_RETRY = { initialMs: 1000, coefficient: 2, maximumMs: 60_000 } as const;

/** The pause after the `attempt`-th try (1-based) failed, where a node's retries are made outside Temporal's policy. */
export function nodeRetryDelayMs(attempt: number): number {
  return Math.min(NODE_RETRY.initialMs * NODE_RETRY.coefficient ** (attempt - 1), NODE_RETRY.maximumMs);
}
