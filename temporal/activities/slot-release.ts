import { Context } from '@temporalio/activity';
import type { TokenUsage } from '../../src/engine/run-contract';
import {
  type HeldSlots,
  type SlotRelease,
  type SlotsReturned,
  releaseSlotSignal,
  retryAfterOf,
} from '../../src/contracts/limit-contract';
import { failureOutcomeOf } from '../../src/contracts/breaker-contract';

/**
 * A model call's attempt under fleet-wide limits: its slots go back from here as soon as the
 * provider has answered, so the next waiting run is granted without a round trip through this
 * run's workflow. A release says how the call ended (what a breaker counts); a failed attempt's
 * carries the provider's Retry-After; the run releases
 * again after a failure (a release is idempotent), and after a success only if this one did not go.
 */
export async function releasingSlots<T extends { usage?: TokenUsage }>(
  slots: HeldSlots | undefined,
  attempt: () => Promise<T>,
): Promise<T & SlotsReturned> {
  if (!slots) return attempt();
  let result: T;
  try {
    result = await attempt();
  } catch (err) {
    const holdBackMs = retryAfterOf(err);
    const outcome = failureOutcomeOf(err);
    await release(slots, {
      requestId: slots.requestId,
      ...(holdBackMs ? { holdBackMs } : {}),
      ...(outcome ? { outcome } : {}),
    });
    throw err;
  }
  const tokens = result.usage?.total_tokens;
  const released = await release(slots, {
    requestId: slots.requestId,
    outcome: 'ok',
    ...(tokens !== undefined ? { tokens } : {}),
  });
  return released ? { ...result, slotsReleased: true } : result;
}

/** True when every limit took the release; a failure leaves it to the run (never fails the call). */
async function release(slots: HeldSlots, body: SlotRelease): Promise<boolean> {
  const { client, log } = Context.current();
  const sent = await Promise.allSettled(
    slots.limitWorkflowIds.map((id) => client.workflow.getHandle(id).signal(releaseSlotSignal, body)),
  );
  const failed = sent.filter((s) => s.status === 'rejected');
  if (failed.length > 0) log.warn('Could not give back a model slot; the run will', { reason: String(failed[0]) });
  return failed.length === 0;
}
