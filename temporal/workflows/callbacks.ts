import {
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  log,
  startChild,
} from '@temporalio/workflow';
import {
  type CallbackEvent,
  type RunCallbackInfo,
  callbackDeliveryId,
  finalCallbackEvent,
} from '../../src/engine/callback-events';
import type { RunStatus } from '../../src/engine/statuses';
import { type CallbackDeliveryInput, callbackWorkflowId } from '../../src/contracts/callback-contract';
import { WorkflowType } from '../../src/contracts/workflow-names';

/**
 * Tells the run's callback about `event`, if it subscribed to it: starts the delivery's own
 * workflow (a child, by a deterministic id: at most once) and lets it go. The child is
 * abandoned: it outlives the run, is never cancelled with it, and its retries (hours) never hold
 * the run up or fail it. Call it once the state the event announces is recorded.
 */
export async function announce(
  runId: string,
  callback: RunCallbackInfo | undefined,
  event: CallbackEvent,
  n: string | number = 1,
): Promise<void> {
  if (!callback?.events.includes(event)) return;
  const deliveryId = callbackDeliveryId(runId, event, n);
  const input: CallbackDeliveryInput = { runId, event, deliveryId };
  try {
    // Also from a cancelled run: a cancelled scope would refuse to start the child.
    await CancellationScope.nonCancellable(() =>
      startChild(WorkflowType.spurCallbackDelivery, {
        workflowId: callbackWorkflowId(callback.workflowIdPrefix, deliveryId),
        args: [input],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        cancellationType: ChildWorkflowCancellationType.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `callback ${event} of run ${runId}`,
      }),
    );
  } catch (err) {
    // Started before (a reset run replaying its end): that delivery stands. Anything else must
    // not fail the run either: the record shows no delivery, the log says why.
    // (@temporalio/workflow does not export the error's class: its name tells.)
    if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError')
      log.warn('callback delivery not started', { runId, event, error: String(err) });
  }
}

/** The run ended with `status` (recorded): its final event, if subscribed. */
export function announceEnd(runId: string, callback: RunCallbackInfo | undefined, status: RunStatus): Promise<void> {
  const event = finalCallbackEvent(status);
  return event ? announce(runId, callback, event) : Promise.resolve();
}
