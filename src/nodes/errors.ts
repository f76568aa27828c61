import type { ProviderFailureKind } from '../engine/failure-usage';

/**
 * How a node's `execute` reports failure. The activity that runs the node maps these onto
 * Temporal: a NodeExecutionError fails the node at once (retrying cannot help: a bad template,
 * an exception in user code, output that does not match its schema); a TransientNodeError is
 * retried with backoff (rate limits, 5xx, network errors), honouring `retryAfterMs` when the
 * provider said how long to wait. Any other thrown error is treated as transient.
 */
export class NodeExecutionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NodeExecutionError';
  }
}

export class TransientNodeError extends Error {
  /** How a provider failed the call, where the error is one (a provider limit's breaker counts it). */
  readonly kind?: ProviderFailureKind;

  constructor(
    message: string,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown; kind?: ProviderFailureKind },
  ) {
    super(message, options);
    this.name = 'TransientNodeError';
    if (options?.kind) this.kind = options.kind;
  }
}
