import { defineSignal } from '@temporalio/workflow';
import type { ApprovalDeliveryOutcome, ApprovalNotice, ApprovalRecipient } from '../engine/approvals';

export type { ApprovalNotice };

/** Input of one `spurApprovalDelivery` workflow: one message with one recipient's link. */
export interface ApprovalDeliveryInput {
  runId: string;
  pauseId: string;
  /** `<pauseId>:<notice>:<n>`: the delivery's record and the webhook's `X-Spur-Event-Id`. */
  deliveryId: string;
  notice: ApprovalNotice;
  recipient: ApprovalRecipient;
  /** When the pause times out (ISO), if it does: its links expire then at the latest. */
  deadline: string | null;
}

/** A delivery that must not be retried (a refused request, a missing credential or setting, a refused address). */
export const APPROVAL_DELIVERY_REFUSED = 'ApprovalDeliveryRefused';

/** The delivery's workflow (`approval-<delivery id>`, behind the installation's prefix): one id, so it starts at most once. */
export const approvalDeliveryWorkflowId = (workflowIdPrefix: string, deliveryId: string) =>
  `${workflowIdPrefix}approval-${deliveryId}`;

/**
 * A delivery tells its run how it went: the run's workflow, the only writer of its event stream,
 * records the `pause.notification` event (a delivery writing it beside the run's own saves could
 * take the same event number).
 */
export const approvalDeliverySignal = defineSignal<[ApprovalDeliveryOutcome]>('approvalDelivery');
