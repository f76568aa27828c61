import { ActivityFailure, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { CallbackActivities } from '../activities';
import { deliveryOptions } from './activity-options';
import { CALLBACK_REFUSED, type CallbackDeliveryInput } from '../../src/contracts/callback-contract';

const local = proxyLocalActivities<CallbackActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/**
 * One callback delivery (`<run workflow id>/callback:<delivery id>`): POST the event until the
 * receiver takes it (2xx), refuses it for good (4xx other than 429, a redirect, a refused address)
 * or the configured time is up. Every attempt is recorded by the activity; the outcome here.
 */
export async function spurCallbackDelivery(input: CallbackDeliveryInput): Promise<'delivered' | 'failed'> {
  const policy = await local.beginCallbackDelivery(input);
  const delivery = proxyActivities<CallbackActivities>(deliveryOptions(policy, CALLBACK_REFUSED));
  try {
    await delivery.deliverCallback(input);
    return 'delivered';
  } catch (err) {
    const reason = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    await local.callbackGaveUp({ deliveryId: input.deliveryId, reason });
    return 'failed';
  }
}
