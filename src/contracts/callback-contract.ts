import type { CallbackEvent } from '../engine/callback-events';

/** Input of one `spurCallbackDelivery` workflow: which run, which event; never the url or secret. */
export interface CallbackDeliveryInput {
  runId: string;
  event: CallbackEvent;
  /** `<runId>:<event>:<n>`: the `X-Spur-Event-Id` header and the key of the delivery's record. */
  deliveryId: string;
}

/** How long and how often a delivery is tried (the worker's settings, read by a local activity). */
export interface CallbackRetryPolicy {
  firstRetryMs: number;
  maxRetryMs: number;
  giveUpAfterMs: number;
}

/** A delivery that must not be retried (a 4xx other than 429, a redirect, a refused address, no callback). */
export const CALLBACK_REFUSED = 'CallbackRefused';
/** A delivery worth trying again (network error, 5xx, 429). */
export const CALLBACK_RETRY = 'CallbackRetry';

/** The delivery's workflow (`callback-<delivery id>`, behind the installation's prefix): one id, so it starts at most once. */
export const callbackWorkflowId = (workflowIdPrefix: string, deliveryId: string) =>
  `${workflowIdPrefix}callback-${deliveryId}`;
