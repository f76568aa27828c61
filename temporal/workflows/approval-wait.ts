import {
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  condition,
  log,
  startChild,
} from '@temporalio/workflow';
import {
  type ApprovalPlan,
  type ApprovalRecipient,
  approvalDeliveryId,
  usesApprovalFlow,
} from '../../src/engine/approvals';
import {
  type ApprovalDeliveryInput,
  type ApprovalNotice,
  approvalDeliveryWorkflowId,
} from '../../src/contracts/approval-contract';
import { type PauseActionRequest, TIMEOUT_USER } from '../../src/contracts/pauses';
import { WorkflowType } from '../../src/contracts/workflow-names';
import { type OpenPause, decisionOf } from './pause-book';

/** How a pause ended: someone decided (or the timeout decided for them), or the timeout fails the node. */
export type ApprovalOutcome = { kind: 'decided'; decision: PauseActionRequest } | { kind: 'failed'; error: string };

/**
 * Waits durably for the pause's decision. A node without notifications, reminders, escalation or
 * quorum waits as it always has (one condition, with the timeout's timer when it has one), so the
 * histories of such runs keep their commands. Otherwise the links go out first, then the workflow
 * sleeps until the next reminder, escalation or the timeout, whichever comes first: timers, which
 * survive restarts and cost nothing while waiting.
 */
export async function awaitApproval(run: RunIds, pause: OpenPause, plan: ApprovalPlan): Promise<ApprovalOutcome> {
  const timedOut = usesApprovalFlow(plan) ? await waitWithNotices(run, pause, plan) : await waitPlain(pause, plan);
  if (!timedOut && pause.decision) return { kind: 'decided', decision: pause.decision };
  const seconds = (plan.timeoutMs ?? 0) / 1000;
  const fails = plan.onTimeout === 'fail';
  const decision: PauseActionRequest = {
    action: plan.onTimeout === 'approve' ? 'APPROVE' : 'DECLINE',
    inputs: {},
    userId: TIMEOUT_USER,
    comments: fails ? `No decision within ${seconds} s: the node fails` : `No action within ${seconds} s`,
    channel: 'timeout',
  };
  pause.decisions.push(decisionOf(decision));
  pause.decision = decision;
  return fails
    ? { kind: 'failed', error: `No decision within ${seconds} s (on_timeout: fail)` }
    : { kind: 'decided', decision };
}

/** The run and the installation's workflow-id prefix its deliveries are named behind. */
export interface RunIds {
  runId: string;
  workflowIdPrefix: string;
}

/** Today's wait: true when the timeout came first. condition() without a timeout resolves to nothing. */
async function waitPlain(pause: OpenPause, plan: ApprovalPlan): Promise<boolean> {
  if (plan.timeoutMs !== null) return !(await condition(() => pause.decision !== null, plan.timeoutMs));
  await condition(() => pause.decision !== null);
  return false;
}

/** Sends the links, then reminders and the escalation at their times; true when the timeout came first. */
async function waitWithNotices(run: RunIds, pause: OpenPause, plan: ApprovalPlan): Promise<boolean> {
  const start = Date.now();
  const deadline = plan.timeoutMs !== null ? start + plan.timeoutMs : null;
  const send = (recipients: ApprovalRecipient[], notice: ApprovalNotice) =>
    sendLinks(run, pause, recipients, notice, deadline);
  const due: { at: number; act: () => Promise<void> }[] = [];
  if (plan.remindAfterMs !== null)
    // A reminder goes to those who have not decided yet.
    due.push({ at: start + plan.remindAfterMs, act: () => send(undecided(pause, plan.notify), 'remind') });
  if (plan.escalateAfterMs !== null && plan.escalateTo.length > 0)
    due.push({ at: start + plan.escalateAfterMs, act: () => send(plan.escalateTo, 'escalate') });
  due.sort((a, b) => a.at - b.at);
  await send(plan.notify, 'notify');
  for (;;) {
    if (pause.decision) return false;
    const next = Math.min(due[0]?.at ?? Infinity, deadline ?? Infinity);
    if (next === Infinity) {
      await condition(() => pause.decision !== null);
      return false;
    }
    if (await condition(() => pause.decision !== null, Math.max(1, next - Date.now()))) return false;
    if (deadline !== null && Date.now() >= deadline) return true;
    while (due[0] && due[0].at <= Date.now()) await (due.shift() as { act: () => Promise<void> }).act();
  }
}

function undecided(pause: OpenPause, recipients: ApprovalRecipient[]): ApprovalRecipient[] {
  const decided = new Set(pause.decisions.map((d) => d.user_id));
  return recipients.filter((r) => !decided.has(r.userId));
}

/**
 * One delivery workflow per recipient (a child by a deterministic id: at most once), abandoned:
 * it outlives the run, is never cancelled with it, and its retries never hold the run up or fail it.
 */
async function sendLinks(
  { runId, workflowIdPrefix }: RunIds,
  pause: OpenPause,
  recipients: ApprovalRecipient[],
  notice: ApprovalNotice,
  deadline: number | null,
): Promise<void> {
  await Promise.all(
    recipients.map(async (recipient, i) => {
      const deliveryId = approvalDeliveryId(pause.pauseId, notice, i + 1);
      const input: ApprovalDeliveryInput = {
        runId,
        pauseId: pause.pauseId,
        deliveryId,
        notice,
        recipient,
        deadline: deadline !== null ? new Date(deadline).toISOString() : null,
      };
      try {
        await CancellationScope.nonCancellable(() =>
          startChild(WorkflowType.spurApprovalDelivery, {
            workflowId: approvalDeliveryWorkflowId(workflowIdPrefix, deliveryId),
            args: [input],
            parentClosePolicy: ParentClosePolicy.ABANDON,
            cancellationType: ChildWorkflowCancellationType.ABANDON,
            workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
            staticSummary: `${notice} ${recipient.channel} for pause ${pause.pauseId}`,
          }),
        );
      } catch (err) {
        // Started before (a reset run): that delivery stands. Anything else must not fail the run.
        if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError')
          log.warn('approval delivery not started', { runId, deliveryId, error: String(err) });
      }
    }),
  );
}
