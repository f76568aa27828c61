import { retryAfterMs } from '../outbound/retry-after';
import { createHmac } from 'node:crypto';
import type { OutboundFetch } from '../outbound/outbound-fetch';

/** `sha256=<hex HMAC-SHA256 of the raw body>`: what a receiver recomputes with the shared secret. */
export function callbackSignature(secret: string, body: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface CallbackAnswer {
  statusCode: number;
  /** The receiver's Retry-After (429, 503), in ms; null when absent or unreadable. */
  retryAfterMs: number | null;
}

/**
 * One POST through the outbound client (address checked and pinned, no redirect followed), bounded
 * by `timeoutMs`. The receiver's body is never read: the connection closes once the status is
 * known, so a receiver trickling bytes cannot hold the worker. Network errors and refusals reject.
 */
export async function postCallback(
  fetch: OutboundFetch,
  url: string,
  body: Buffer,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<CallbackAnswer> {
  const answer = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'Spur-Callback/1', ...headers },
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(timeoutMs),
  });
  await answer.body?.cancel();
  return { statusCode: answer.status, retryAfterMs: retryAfterMs(answer.headers) ?? null };
}

/** What an answer means: taken (2xx), worth another try (429, 5xx), refused for good (the rest). */
export function callbackVerdict(statusCode: number): 'delivered' | 'retry' | 'refused' {
  if (statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode === 429 || statusCode >= 500) return 'retry';
  return 'refused';
}
