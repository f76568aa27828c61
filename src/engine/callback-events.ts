import type { RunStatus } from './statuses';

/**
 * What a run's callback can be told: its final state, and each human pause. The
 * api validates subscriptions against this list; the run workflow announces them.
 */
export const CALLBACK_EVENTS = ['run.completed', 'run.failed', 'run.canceled', 'run.paused'] as const;
export type CallbackEvent = (typeof CALLBACK_EVENTS)[number];

/** A subscription without `events` gets the run's final event, whichever it is. */
export const FINAL_CALLBACK_EVENTS: readonly CallbackEvent[] = ['run.completed', 'run.failed', 'run.canceled'];

const FINAL_EVENT: Partial<Record<RunStatus, CallbackEvent>> = {
  COMPLETED: 'run.completed',
  FAILED: 'run.failed',
  CANCELED: 'run.canceled',
};

/** The final event of a run that ended with `status` (null: not a final status). */
export function finalCallbackEvent(status: RunStatus): CallbackEvent | null {
  return FINAL_EVENT[status] ?? null;
}

/** What a run's workflow knows of its callback: the events, and where delivery workflow ids start. */
export interface RunCallbackInfo {
  events: CallbackEvent[];
  /** The installation's workflow-id prefix (SPUR_WORKFLOW_ID_PREFIX), for the deliveries' ids. */
  workflowIdPrefix: string;
}

/**
 * A delivery's stable id (`X-Spur-Event-Id`, the key of its record and of its Temporal workflow):
 * `<runId>:<event>:<n>`, where `n` tells repeated events of one run apart (a pause's node and number).
 */
export const callbackDeliveryId = (runId: string, event: CallbackEvent, n: string | number) => `${runId}:${event}:${n}`;
