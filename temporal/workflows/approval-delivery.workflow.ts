import {
  ActivityFailure,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { ApprovalActivities } from '../activities';
import { deliveryOptions } from './activity-options';
import {
  APPROVAL_DELIVERY_REFUSED,
  type ApprovalDeliveryInput,
  approvalDeliverySignal,
} from '../../src/contracts/approval-contract';

const local = proxyLocalActivities<ApprovalActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/**
 * One message with approval links (`<run workflow id>/approval:<delivery id>`), retried like a run
 * callback: until the channel takes it, refuses it for good (a 4xx, a missing credential, a refused
 * address) or the callbacks' retry time is up. Every attempt is recorded by the activity; a delivery
 * given up shows on the pause and in the run's events. The run never waits for it.
 */
export async function spurApprovalDelivery(input: ApprovalDeliveryInput): Promise<'sent' | 'failed' | 'skipped'> {
  const policy = await local.beginApprovalDelivery(input);
  const delivery = proxyActivities<ApprovalActivities>(deliveryOptions(policy, APPROVAL_DELIVERY_REFUSED));
  try {
    const outcome = await delivery.deliverApprovalLink(input);
    if (outcome === 'sent') await tellRun(input, null);
    return outcome;
  } catch (err) {
    const reason = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    await local.approvalDeliveryGaveUp({ input, reason });
    await tellRun(input, reason);
    return 'failed';
  }
}

/** The run records the outcome in its events; a run that has ended has no stream left to tell. */
async function tellRun(input: ApprovalDeliveryInput, error: string | null): Promise<void> {
  const parent = workflowInfo().parent;
  if (!parent) return;
  const { recipient } = input;
  try {
    await getExternalWorkflowHandle(parent.workflowId).signal(approvalDeliverySignal, {
      pause_id: input.pauseId,
      delivery_id: input.deliveryId,
      notice: input.notice,
      channel: recipient.channel,
      to: recipient.to,
      user_id: recipient.userId,
      status: error === null ? 'sent' : 'failed',
      error,
    });
  } catch (err) {
    log.info('run not told of its approval delivery (ended)', { runId: input.runId, error: String(err) });
  }
}
