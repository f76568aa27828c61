import { callbackSignature, callbackVerdict, postCallback } from '../callbacks/callback-post';
import type { ApprovalRecipient } from '../engine/approvals';
import { TransientNodeError } from '../nodes/errors';
import type { ServiceContext } from '../nodes/integrations/http/service-client';
import { postSlackMessage } from '../nodes/integrations/slack-notify-node';
import { sendEmail } from '../nodes/tools/send-email-node';
import { OutboundRefusedError } from '../outbound/checked-target';
import { type ApprovalMessage, emailSubject, plainText, slackText, webhookBody } from './approval-messages';

/** A delivery worth another try (network error, 5xx, 429), after `retryAfterMs` when the channel said. */
export class ApprovalRetry extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** A delivery that would fail again (a refused request, a missing credential or setting, a refused address). */
export class ApprovalRefused extends Error {}

export interface ApprovalSenderDeps {
  /** Env management's credentials and base URLs, the outbound client, the activity's cancellation. */
  service: ServiceContext;
  webhookSecret: string | undefined;
  /** How long one webhook POST may take (the callbacks' setting). */
  webhookTimeoutMs: number;
}

/**
 * Sends one recipient's message through their channel: Slack and e-mail through the integrations
 * the nodes use (their credentials and base URLs from env management), a webhook as a run callback
 * is sent (signed, no redirect followed, the answer's body never read). Every request goes through
 * the outbound client. Throws ApprovalRetry or ApprovalRefused.
 */
export async function sendApprovalMessage(
  recipient: ApprovalRecipient,
  message: ApprovalMessage,
  deliveryId: string,
  deps: ApprovalSenderDeps,
): Promise<void> {
  if (recipient.channel === 'webhook') return postWebhook(recipient.to, message, deliveryId, deps);
  try {
    if (recipient.channel === 'slack')
      await postSlackMessage(deps.service, recipient.mode ?? 'bot', recipient.to, slackText(message));
    else
      await sendEmail(deps.service, recipient.provider ?? 'resend', {
        from: recipient.from ?? '',
        to: [recipient.to],
        subject: emailSubject(message),
        text: plainText(message),
      });
  } catch (err) {
    if (err instanceof TransientNodeError) throw new ApprovalRetry(err.message, err.retryAfterMs);
    throw new ApprovalRefused((err as Error).message || String(err));
  }
}

async function postWebhook(
  url: string,
  message: ApprovalMessage,
  deliveryId: string,
  deps: ApprovalSenderDeps,
): Promise<void> {
  if (!deps.webhookSecret)
    throw new ApprovalRefused('webhook notifications need SPUR_APPROVAL_WEBHOOK_SECRET, which signs them');
  const body = Buffer.from(JSON.stringify(webhookBody(message)));
  const headers = {
    'x-spur-event': 'pause.approval_requested',
    'x-spur-event-id': deliveryId,
    'x-spur-signature': callbackSignature(deps.webhookSecret, body),
  };
  let answer;
  try {
    answer = await postCallback(deps.service.fetch, url, body, headers, deps.webhookTimeoutMs);
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw new ApprovalRefused(`webhook address: ${err.message}`);
    throw new ApprovalRetry(`webhook POST failed: ${(err as Error).message || String(err)}`);
  }
  const verdict = callbackVerdict(answer.statusCode);
  if (verdict === 'delivered') return;
  const text = `the webhook answered ${answer.statusCode}`;
  if (verdict === 'refused') throw new ApprovalRefused(text);
  throw new ApprovalRetry(text, answer.retryAfterMs ?? undefined);
}
