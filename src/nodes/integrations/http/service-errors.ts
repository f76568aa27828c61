import { retryAfterMs } from '../../../outbound/retry-after';
import { outboundStop } from '../../../outbound/errors.js';
import { NodeExecutionError, TransientNodeError } from '../../errors.js';
import type { ServiceSpec } from './services.js';

/**
 * A service refused the request; `status` lets a caller react to one answer (Reddit renews a
 * cached token after a 401). Not retried: the same request would be refused again.
 */
export class ServiceRejectedError extends NodeExecutionError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** A failure named the way the service named it ("Slack API error: channel_not_found"). */
export function serviceFailure(service: Pick<ServiceSpec, 'label'>, message: string, status = 0): ServiceRejectedError {
  return new ServiceRejectedError(`${service.label} API error${status ? ` ${status}` : ''}: ${message}`, status);
}

/**
 * Maps an HTTP error answer onto the node error contract. Retried (by the activity's policy) are
 * only answers that can change on their own: 5xx, and 429 when the service says when to come
 * back (Retry-After). A 429 without it, and every other 4xx, fail the task at once.
 */
export function failureForStatus(service: ServiceSpec, status: number, headers: Headers, bodyText: string): Error {
  const message = `${service.label} API error ${status}: ${serviceMessage(bodyText) || 'no message'}`;
  if (status >= 500) return new TransientNodeError(message, retryAfterMs(headers));
  if (status === 429) {
    const after = retryAfterMs(headers);
    if (after !== undefined) return new TransientNodeError(message, after);
    return new ServiceRejectedError(`${message} (no Retry-After, so not retried)`, status);
  }
  return new ServiceRejectedError(message, status);
}

/** A transport failure (refused connection, reset, DNS, timeout): worth retrying. */
export function networkFailure(service: ServiceSpec, err: unknown): TransientNodeError | NodeExecutionError {
  const stop = outboundStop(err);
  if (stop)
    return new NodeExecutionError(`${service.label} request stopped by the outbound policy: ${stop.message}`, {
      cause: err,
    });
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const timedOut = err instanceof Error && err.name === 'TimeoutError';
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new TransientNodeError(`${service.label} request ${timedOut ? 'timed out' : `failed: ${detail}`}`, undefined, {
    cause: err,
  });
}

const MAX_MESSAGE = 500;

/**
 * The service's own words from an error body: GitHub, Reddit and Resend say `message`, Slack,
 * Firecrawl and Exa `error`, Google `error.message`, SendGrid `errors[].message`; a body that is
 * not JSON is quoted as text.
 */
export function serviceMessage(bodyText: string): string {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return bodyText.trim().slice(0, MAX_MESSAGE);
  }
  return (messageIn(body) ?? bodyText.trim()).slice(0, MAX_MESSAGE);
}

function messageIn(body: unknown): string | undefined {
  if (typeof body === 'string') return body || undefined;
  if (body === null || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  if (Array.isArray(record.errors)) {
    const parts = record.errors
      .map((e) => (Array.isArray(e) ? e.map(String).join(': ') : messageIn(e)))
      .filter(Boolean);
    if (parts.length) return parts.join('; ');
  }
  for (const key of ['message', 'error', 'detail', 'error_description']) {
    const found = messageIn(record[key]);
    if (found) return found;
  }
  return undefined;
}
