import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ApprovalSettings } from '../../src/config/settings';
import type { ApprovalTokens } from '../../src/approvals/approval-token';
import { ApprovalRefused, ApprovalRetry, sendApprovalMessage } from '../../src/approvals/approval-senders';
import { fromJsonText } from '../../src/db/json-text';
import type { Models, PauseDoc } from '../../src/db/models';
import { createRunLookups } from '../../src/db/runs/run-lookups';
import { type ApprovalDeliveryKey, createApprovalDeliveries } from '../../src/db/runs/approval-deliveries';
import type { PauseDecision } from '../../src/engine/approvals';
import type { OutboundFetch } from '../../src/outbound/outbound-fetch';
import { APPROVAL_DELIVERY_REFUSED, type ApprovalDeliveryInput } from '../../src/contracts/approval-contract';
import type { CallbackRetryPolicy } from '../../src/contracts/callback-contract';

/** What approval deliveries need from the worker (composed in temporal/spur-worker.ts). */
export interface ApprovalDeliveryDeps {
  settings: ApprovalSettings;
  /** Mints the links' tokens (the api checks them with the same key). */
  tokens: ApprovalTokens;
  /** Retried like callbacks: their settings. */
  retry: CallbackRetryPolicy;
  webhookTimeoutMs: number;
}

const keyOf = (input: ApprovalDeliveryInput): ApprovalDeliveryKey => ({
  deliveryId: input.deliveryId,
  runId: input.runId,
  pauseId: input.pauseId,
  notice: input.notice,
  channel: input.recipient.channel,
  to: input.recipient.to,
  userId: input.recipient.userId,
});

/**
 * Approval deliveries: one activity attempt is one message, recorded whatever its outcome. A
 * message for a pause already decided (or already decided by this recipient) is not sent.
 */
export function createApprovalActivities(deps: {
  models: Models;
  secret(name: string): Promise<string | undefined>;
  fetch: OutboundFetch;
  approvals: ApprovalDeliveryDeps;
}) {
  const deliveries = createApprovalDeliveries(deps.models);
  const { Pause, Workflow } = deps.models;
  const { settings, tokens } = deps.approvals;

  async function deliverApprovalLink(input: ApprovalDeliveryInput): Promise<'sent' | 'skipped'> {
    const key = keyOf(input);
    const pause = await Pause.findById(input.pauseId).lean<PauseDoc>();
    const decided = fromJsonText<PauseDecision[]>(pause?.decisions) ?? [];
    if (!pause || pause.resume_time || decided.some((d) => d.user_id === input.recipient.userId)) {
      await deliveries.skipped(key);
      return 'skipped';
    }
    const workflowId = await createRunLookups(deps.models).workflowOf(input.runId);
    const workflow = workflowId ? await Workflow.findById(workflowId, { name: 1 }).lean<{ name: string }>() : null;
    const expiresMs = Math.min(
      Date.now() + settings.linkTtlMs,
      input.deadline ? Date.parse(input.deadline) : Number.POSITIVE_INFINITY,
    );
    const token = tokens.mint({
      runId: input.runId,
      pauseId: input.pauseId,
      userId: input.recipient.userId,
      channel: input.recipient.channel,
      expiresAt: Math.ceil(expiresMs / 1000),
    });
    const message = {
      notice: input.notice,
      runId: input.runId,
      pauseId: input.pauseId,
      nodeId: pause.node_id,
      workflowId: workflowId ?? '',
      workflowName: workflow?.name ?? workflowId ?? '',
      pauseMessage: pause.pause_message ?? '',
      link: `${settings.publicUrl}/approve/${token}`,
      expiresAt: new Date(Math.ceil(expiresMs / 1000) * 1000),
      userId: input.recipient.userId,
    };
    const service = { secret: deps.secret, fetch: deps.fetch, signal: Context.current().cancellationSignal };
    try {
      await sendApprovalMessage(input.recipient, message, input.deliveryId, {
        service,
        webhookSecret: settings.webhookSecret,
        webhookTimeoutMs: deps.approvals.webhookTimeoutMs,
      });
    } catch (err) {
      const text = (err as Error).message || String(err);
      await deliveries.attemptFailed(key, text);
      if (err instanceof ApprovalRetry) {
        const { firstRetryMs, maxRetryMs } = deps.approvals.retry;
        const nextRetryDelay =
          err.retryAfterMs === undefined ? undefined : Math.max(firstRetryMs, Math.min(err.retryAfterMs, maxRetryMs));
        throw ApplicationFailure.create({ message: text, ...(nextRetryDelay ? { nextRetryDelay } : {}) });
      }
      if (err instanceof ApprovalRefused) throw ApplicationFailure.nonRetryable(text, APPROVAL_DELIVERY_REFUSED);
      throw err;
    }
    await deliveries.sent(key);
    return 'sent';
  }

  return {
    deliverApprovalLink,
    /** The delivery starts: its record appears (pending); the retry settings are read once for it. */
    async beginApprovalDelivery(input: ApprovalDeliveryInput): Promise<CallbackRetryPolicy> {
      await deliveries.open(keyOf(input));
      return deps.approvals.retry;
    },
    async approvalDeliveryGaveUp({ input, reason }: { input: ApprovalDeliveryInput; reason: string }): Promise<void> {
      await deliveries.failed(keyOf(input), reason);
    },
  };
}
