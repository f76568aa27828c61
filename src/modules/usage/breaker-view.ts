import { z } from '../../zod';
import { BREAKER_STATES, type BreakerRule } from '../../contracts/breaker-contract';
import type { LimitEntry } from '../../usage/provider-limits';

export const BreakerRuleSchema = z
  .object({
    failures: z.number().int().min(1).max(1000).openapi({
      description: 'Provider failures (5xx, timeouts, connection errors, 429s) within window_seconds that open it',
    }),
    window_seconds: z
      .number()
      .int()
      .min(1)
      .max(86_400)
      .openapi({ description: 'The sliding window failures count in' }),
    open_seconds: z.number().int().min(1).max(86_400).openapi({
      description:
        'How long it stays open before one probe call goes; its success closes it, its failure opens it again',
    }),
  })
  .strict()
  .openapi('ProviderLimitBreaker', {
    description:
      "Stops the limit's calls while its provider keeps failing them: their runs wait in place (docs/runs.md#breaker)",
  });

export const BreakerStateSchema = z
  .object({
    state: z.enum(BREAKER_STATES),
    since: z.iso
      .datetime()
      .nullable()
      .openapi({ description: 'When it took this state; null when it never left closed' }),
    opened_by: z.enum(['failures', 'operator']).nullable().openapi({
      description:
        "Who opened it: the provider's failures (it probes by itself) or an operator (it stays open until closed)",
    }),
    failures_in_window: z.number().int().openapi({ description: 'Failures it counts now (closed)' }),
    probe_after: z.iso
      .datetime()
      .nullable()
      .openapi({ description: 'When an open breaker opened by failures lets its probe call go' }),
  })
  .openapi('ProviderLimitBreakerState');
export type BreakerStateView = z.output<typeof BreakerStateSchema>;

const iso = (ms: number) => new Date(ms).toISOString();

/** What a limit's entry shows of its breaker now: the recorded state, its failures counted against the window. */
export function breakerView(entry: LimitEntry, now: number): BreakerStateView | undefined {
  const record = entry.breaker_state;
  if (!record) return undefined;
  const rule: BreakerRule | undefined = entry.breaker;
  const windowMs = (rule?.window_seconds ?? 0) * 1000;
  const openedByFailures = record.state === 'open' && record.opened_by === 'failures';
  return {
    state: record.state,
    since: record.since > 0 ? iso(record.since) : null,
    opened_by: record.state === 'closed' ? null : record.opened_by,
    failures_in_window:
      record.state === 'closed' && rule ? record.failure_times.filter((t) => t + windowMs > now).length : 0,
    probe_after: openedByFailures && rule ? iso(record.since + rule.open_seconds * 1000) : null,
  };
}
