import { outboundStop } from '../../../outbound/errors.js';
import { NodeExecutionError, TransientNodeError } from '../../errors.js';
import type { NodeExecutionContext } from '../../types.js';
import { type RequestHeaders, keepsCredentialsHome } from './http-request-headers.js';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** As many hops as the outbound client follows for others. */
const MAX_REDIRECTS = 5;

export interface PreparedRequest {
  method: string;
  url: URL;
  headers: RequestHeaders;
  body: string | undefined;
  timeoutMs: number;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** Where the answer came from, after redirects. */
  url: URL;
}

/** `origin/path` of a URL: what failures name (its query may hold values from input). */
export function shownUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/**
 * Sends the request through the outbound client (address policy, size cap, idle timeout) under
 * the activity's cancellation and `timeout_seconds`. Without credentials the client follows
 * redirects (dropping headers at another origin); with them each hop is followed here, and only
 * while it stays under every credential's base, so a redirect never carries a key elsewhere.
 */
export async function sendRequest(
  request: PreparedRequest,
  ctx: Pick<NodeExecutionContext, 'fetch' | 'signal'>,
): Promise<Answer> {
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(request.timeoutMs)]);
  const manual = request.headers.credentialNames.length > 0;
  let { url, method, body } = request;
  try {
    for (let hop = 0; ; hop++) {
      const res = await ctx.fetch(url, {
        method,
        headers: request.headers.all,
        body,
        redirect: manual ? 'manual' : 'follow',
        signal,
      });
      const location = res.headers.get('location');
      if (!manual || !REDIRECTS.has(res.status) || !location)
        return { status: res.status, headers: res.headers, text: await res.text(), url: new URL(res.url || url) };
      await res.body?.cancel();
      const next = new URL(location, url);
      if (!keepsCredentialsHome(next, request.headers))
        throw new NodeExecutionError(
          `${shownUrl(url)} redirected to ${shownUrl(next)}, outside the base of the credential in headers.${request.headers.credentialNames.join(', headers.')}; the redirect was not followed`,
        );
      if (hop >= MAX_REDIRECTS)
        throw new NodeExecutionError(`more than ${MAX_REDIRECTS} redirects from ${shownUrl(request.url)}`);
      if (res.status === 303 || (method === 'POST' && (res.status === 301 || res.status === 302))) {
        method = 'GET';
        body = undefined;
      }
      url = next;
    }
  } catch (err) {
    throw transportFailure(err, url, request.timeoutMs, ctx.signal);
  }
}

/** A failure to get an answer: the policy's refusal fails at once, a network error or timeout is retried. */
function transportFailure(err: unknown, url: URL, timeoutMs: number, cancelled: AbortSignal): unknown {
  if (err instanceof NodeExecutionError) return err;
  // A cancelled activity reports its own cancellation, not a failed request.
  if (cancelled.aborted) return cancelled.reason ?? err;
  const stop = outboundStop(err);
  if (stop)
    return new NodeExecutionError(`request to ${shownUrl(url)} stopped by the outbound policy: ${stop.message}`, {
      cause: err,
    });
  if (err instanceof Error && err.name === 'TimeoutError')
    return new TransientNodeError(`request to ${shownUrl(url)} timed out after ${timeoutMs / 1000} s`, undefined, {
      cause: err,
    });
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new TransientNodeError(`request to ${shownUrl(url)} failed: ${detail}`, undefined, { cause: err });
}
