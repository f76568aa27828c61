import { ApplicationFailure, Context } from '@temporalio/activity';
import { callbackSignature, callbackVerdict, postCallback } from '../../src/callbacks/callback-post';
import { type AttemptRecord, createCallbackDeliveries } from '../../src/db/callback-deliveries';
import type { Models } from '../../src/db/models';
import { createRunLookups } from '../../src/db/runs/run-lookups';
import type { Values } from '../../src/db/values';
import { OutboundRefusedError } from '../../src/outbound/checked-target';
import type { OutboundFetch } from '../../src/outbound/outbound-fetch';
import { metrics } from '../../src/metrics/metrics';
import {
  CALLBACK_REFUSED,
  CALLBACK_RETRY,
  type CallbackDeliveryInput,
  type CallbackRetryPolicy,
} from '../../src/contracts/callback-contract';

/** What a delivery needs from the worker that hosts it (composed in temporal/spur-worker.ts). */
export interface CallbackDeliveryDeps {
  /** The run as `GET /api/run/{id}/` answers it (large values still by reference). */
  runBody(runId: string): Promise<unknown>;
  /** Opens a callback secret sealed by the api. */
  openSecret(sealed: string): string;
  /** The worker's outbound client: the address policy applies to every delivery. */
  fetch: OutboundFetch;
  retry: CallbackRetryPolicy;
  /** How long one POST may take. */
  attemptTimeoutMs: number;
}

/**
 * Callback delivery: one activity attempt is one signed POST, recorded whatever its outcome. The
 * outbound client checks the address again (it may resolve elsewhere now) and connects to the
 * address checked. Delivery is at least once: a receiver dedupes by `X-Spur-Event-Id`.
 */
export function createCallbackActivities(deps: { models: Models; values: Values; callbacks: CallbackDeliveryDeps }) {
  const deliveries = createCallbackDeliveries(deps.models);
  const runs = createRunLookups(deps.models);
  const { callbacks } = deps;

  async function deliverCallback(input: CallbackDeliveryInput): Promise<void> {
    const callback = await runs.callbackOf(input.runId);
    if (!callback)
      throw ApplicationFailure.nonRetryable(`Run ${input.runId} has no callback (any more)`, CALLBACK_REFUSED);
    const started = Date.now();
    const key = { deliveryId: input.deliveryId, runId: input.runId, event: input.event, url: callback.url };
    const attempt = (statusCode: number | null, error: string | null): AttemptRecord => ({
      attempt: Context.current().info.attempt,
      time: new Date(started),
      status_code: statusCode,
      error,
      duration_ms: Date.now() - started,
    });

    const body = await bodyOf(input);
    const headers = {
      'x-spur-event': input.event,
      'x-spur-event-id': input.deliveryId,
      'x-spur-signature': callbackSignature(callbacks.openSecret(callback.secret), body),
    };
    let statusCode: number;
    let retryAfterMs: number | null;
    try {
      ({ statusCode, retryAfterMs } = await postCallback(
        callbacks.fetch,
        callback.url,
        body,
        headers,
        callbacks.attemptTimeoutMs,
      ));
    } catch (err) {
      // The address may resolve elsewhere now than at submission: refused for good, not retried.
      if (err instanceof OutboundRefusedError) {
        const message = `callback address: ${err.message}`;
        await deliveries.recordAttempt(key, attempt(null, message), 'failed', message);
        throw ApplicationFailure.nonRetryable(message, CALLBACK_REFUSED);
      }
      const message = (err as Error).message || String(err);
      await deliveries.recordAttempt(key, attempt(null, message), 'pending');
      throw ApplicationFailure.retryable(`callback POST failed: ${message}`, CALLBACK_RETRY);
    }

    const verdict = callbackVerdict(statusCode);
    if (verdict === 'delivered') {
      await deliveries.recordAttempt(key, attempt(statusCode, null), 'delivered');
      metrics.callbackDeliveries.inc({ outcome: 'delivered' });
      return;
    }
    const message = `the receiver answered ${statusCode}`;
    await deliveries.recordAttempt(
      key,
      attempt(statusCode, null),
      verdict === 'retry' ? 'pending' : 'failed',
      verdict === 'retry' ? null : message,
    );
    if (verdict === 'refused') throw ApplicationFailure.nonRetryable(message, CALLBACK_REFUSED);
    // A receiver's Retry-After is honoured, between the first and the longest wait between attempts
    // (a zero delay is not a delay Temporal schedules a retry after).
    const nextRetryDelay =
      retryAfterMs === null
        ? undefined
        : Math.max(callbacks.retry.firstRetryMs, Math.min(retryAfterMs, callbacks.retry.maxRetryMs));
    throw ApplicationFailure.create({
      message,
      type: CALLBACK_RETRY,
      ...(nextRetryDelay !== undefined ? { nextRetryDelay } : {}),
    });
  }

  /** `{event, run}` as bytes, large values spliced in: exactly what is signed and sent. */
  async function bodyOf(input: CallbackDeliveryInput): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of deps.values.jsonStream({ event: input.event, run: await callbacks.runBody(input.runId) }))
      chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  return {
    deliverCallback,
    /**
     * A delivery starts: its record appears (pending), and the worker's retry settings are read
     * once for it (recorded in its history).
     */
    async beginCallbackDelivery(input: CallbackDeliveryInput): Promise<CallbackRetryPolicy> {
      const callback = await runs.callbackOf(input.runId);
      if (callback)
        await deliveries.open({
          deliveryId: input.deliveryId,
          runId: input.runId,
          event: input.event,
          url: callback.url,
        });
      return callbacks.retry;
    },
    async callbackGaveUp(input: { deliveryId: string; reason: string }): Promise<void> {
      await deliveries.giveUp(input.deliveryId, input.reason);
      metrics.callbackDeliveries.inc({ outcome: 'failed' });
    },
  };
}
