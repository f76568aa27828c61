import type { WorkflowPause } from '../../db/workflow-pauses';
import type { WorkflowPauseState } from './workflows.schemas';

/** A workflow's pause as its answers show it. */
export function shownPause(pause: WorkflowPause, heldDeliveries: number): WorkflowPauseState {
  return {
    reason: pause.reason,
    since: pause.since.toISOString(),
    by: pause.by,
    hold_webhooks: pause.holdWebhooks,
    held_deliveries: heldDeliveries,
  };
}
