import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { type CallbackTarget, pinnedLookup } from './callback-target';

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
 * One POST to the checked address (pinned: no second DNS lookup), no redirect followed, no
 * connection reuse, bounded by `timeoutMs`. Network errors and the timeout reject.
 */
export function postCallback(target: CallbackTarget, body: Buffer, headers: Record<string, string>, timeoutMs: number): Promise<CallbackAnswer> {
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), 'user-agent': 'Spur-Callback/1', ...headers },
      lookup: pinnedLookup(target),
      agent: false,
      timeout: timeoutMs,
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.on('response', (res) => {
      res.resume(); // the receiver's body is not read
      resolve({ statusCode: res.statusCode ?? 0, retryAfterMs: retryAfter(res.headers['retry-after']) });
    });
    req.end(body);
  });
}

function retryAfter(value: string | undefined): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/** What an answer means: taken (2xx), worth another try (429, 5xx), refused for good (the rest). */
export function callbackVerdict(statusCode: number): 'delivered' | 'retry' | 'refused' {
  if (statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode === 429 || statusCode >= 500) return 'retry';
  return 'refused';
}
