import { retryAfterMs } from '../../../outbound/retry-after';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { outboundStop } from '../../../outbound/errors.js';
import { NodeExecutionError, TransientNodeError } from '../../errors.js';
import type { ProviderFailureKind } from '../../../engine/failure-usage';

/**
 * Maps an SDK failure onto the node error contract: rate limits, server errors, timeouts and
 * network failures are transient (Temporal retries them, honouring Retry-After); a rejected
 * request (bad parameters, wrong key, unknown model) fails the node at once.
 */
export function toNodeError(err: unknown, provider: string, signal?: AbortSignal): unknown {
  // A cancelled activity surfaces its own cancellation, not a provider failure.
  if (signal?.aborted) return signal.reason ?? err;
  if (err instanceof NodeExecutionError || err instanceof TransientNodeError) return err;
  const stop = outboundStop(err);
  if (stop)
    return new NodeExecutionError(`${provider} request stopped by the outbound policy: ${stop.message}`, {
      cause: err,
    });
  if (err instanceof OpenAI.APIConnectionError || err instanceof Anthropic.APIConnectionError) {
    const what =
      err instanceof OpenAI.APIConnectionTimeoutError || err instanceof Anthropic.APIConnectionTimeoutError
        ? 'timed out'
        : 'could not connect';
    // The SDKs say "Connection error."; what the connection met (a reset, a refusal) is its cause's.
    const met = err.cause instanceof Error && err.cause.message ? ` (${err.cause.message})` : '';
    return new TransientNodeError(`${provider} request ${what}: ${err.message}${met}`, undefined, {
      cause: err,
      kind: what === 'timed out' ? 'timeout' : 'connection',
    });
  }
  if (err instanceof OpenAI.APIError || err instanceof Anthropic.APIError) {
    return fromStatus(err.status, err.headers, `${provider} API error: ${err.message}`, err);
  }
  return err;
}

function fromStatus(status: number | undefined, headers: Headers | undefined, message: string, cause: unknown): Error {
  // 408/409 are what the SDKs themselves would retry; 429 and 5xx are the usual transient ones.
  if (status === undefined || status === 408 || status === 409 || status === 429 || status >= 500) {
    return new TransientNodeError(message, retryAfterMs(headers), { cause, kind: failureKindOf(status) });
  }
  return new NodeExecutionError(message, { cause });
}

/** 409 is no provider failure (a conflict the SDKs retry): a breaker does not count it. */
function failureKindOf(status: number | undefined): ProviderFailureKind | undefined {
  if (status === undefined) return 'connection';
  if (status === 408) return 'timeout';
  if (status === 429) return 'rate_limited';
  return status >= 500 ? 'server_error' : undefined;
}
