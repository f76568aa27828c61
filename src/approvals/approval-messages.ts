import type { ApprovalNotice } from '../engine/approvals';

/** What a message with an approval link says: facts of the pause, never its input data (the page shows that). */
export interface ApprovalMessage {
  notice: ApprovalNotice;
  runId: string;
  pauseId: string;
  nodeId: string;
  workflowId: string;
  workflowName: string;
  /** The node's message: written by the workflow's author, possibly from hostile data; shown as text. */
  pauseMessage: string;
  link: string;
  expiresAt: Date;
  userId: string;
}

/** A pause message longer than this many characters (code points) is cut in messages (the page shows it whole). */
const MESSAGE_CHARS = 1000;

const LEAD: Record<ApprovalNotice, string> = {
  notify: 'A run is waiting for your decision',
  remind: 'Reminder: a run is still waiting for your decision',
  escalate: 'Escalated to you: a run is waiting for a decision',
};

/** Cut by code points, not UTF-16 units: a cut through an emoji would leave half of it, which no channel shows. */
function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : text;
}

const cut = (text: string) => clip(text, MESSAGE_CHARS);

/** One line of plain text (a subject): no line breaks a header could be split at. */
function oneLine(text: string, max: number): string {
  return clip(text.replace(/[\r\n\t]+/g, ' ').trim(), max);
}

export function emailSubject(m: ApprovalMessage): string {
  return oneLine(`${LEAD[m.notice]}: ${m.workflowName}`, 200);
}

export function plainText(m: ApprovalMessage): string {
  return [
    `${LEAD[m.notice]}.`,
    '',
    `Workflow: ${m.workflowName} (${m.workflowId}), run ${m.runId}, node ${m.nodeId}`,
    '',
    cut(m.pauseMessage),
    '',
    `Review and decide: ${m.link}`,
    `The link is yours alone (${m.userId}), works once and expires ${m.expiresAt.toISOString()}.`,
  ].join('\n');
}

/**
 * Slack's mrkdwn reads `<…>` as links and mentions (`<!channel>`) and `&` as an entity: those three
 * are escaped, as Slack asks, so a pause message cannot ping a channel or disguise a link.
 */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function slackText(m: ApprovalMessage): string {
  return [
    `*${slackEscape(LEAD[m.notice])}*: ${slackEscape(oneLine(m.workflowName, 200))} (run ${slackEscape(m.runId)}, node ${slackEscape(m.nodeId)})`,
    `>${slackEscape(cut(m.pauseMessage)).replace(/\n/g, '\n>')}`,
    `<${m.link}|Review and decide> (expires ${m.expiresAt.toISOString()}, for ${slackEscape(m.userId)} only)`,
  ].join('\n');
}

/** The webhook's body: everything a receiver needs to show the request and its link. */
export function webhookBody(m: ApprovalMessage): Record<string, unknown> {
  return {
    event: 'pause.approval_requested',
    notice: m.notice,
    run_id: m.runId,
    pause_id: m.pauseId,
    node_id: m.nodeId,
    workflow_id: m.workflowId,
    workflow_name: m.workflowName,
    pause_message: m.pauseMessage,
    user_id: m.userId,
    approve_url: m.link,
    expires_at: m.expiresAt.toISOString(),
  };
}
