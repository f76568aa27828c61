import type { TokenUsage } from './run-contract';

/**
 * How a provider failed a call, where a provider limit's breaker counts it (docs/runs.md): it answered
 * 5xx, the call timed out, no connection was made, or it answered 429.
 */
export const PROVIDER_FAILURE_KINDS = ['server_error', 'timeout', 'connection', 'rate_limited'] as const;
export type ProviderFailureKind = (typeof PROVIDER_FAILURE_KINDS)[number];

/** What a failed node execution carries besides its message (an ApplicationFailure's details[0]). */
export interface NodeFailureDetails {
  /** The provider's Retry-After, for a retry that should wait for it. */
  retryAfterMs?: number;
  /** How the provider failed the call, when it did (not the caller's request). */
  failureKind?: ProviderFailureKind;
  /** The model calls the failed attempt had answered: they were paid for, so its task counts them. */
  usage?: TokenUsage;
}

function isUsage(value: unknown): value is TokenUsage {
  const u = value as Partial<TokenUsage> | null;
  return (
    typeof u === 'object' &&
    u !== null &&
    typeof u.prompt_tokens === 'number' &&
    typeof u.completion_tokens === 'number' &&
    typeof u.total_tokens === 'number'
  );
}

/** The usage a failure carries anywhere along its causes (an activity failure wraps the node's). */
export function failureUsage(err: unknown): TokenUsage | undefined {
  for (let cur: unknown = err; cur instanceof Error; cur = (cur as { cause?: unknown }).cause) {
    const details = (cur as { details?: unknown }).details;
    const first: unknown = Array.isArray(details) ? details[0] : undefined;
    const usage = (first as NodeFailureDetails | undefined)?.usage;
    if (isUsage(usage)) return usage;
  }
  return undefined;
}
