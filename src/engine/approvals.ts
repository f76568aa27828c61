import type { PauseAction } from './statuses';

/**
 * A HumanInterventionNode's approval settings (notify, reminders, escalation, timeout, quorum), read
 * from its config as saved. The config was checked at save time (definition rules); this reader is
 * only defensive, so a run's workflow never throws on an odd value.
 */

export const APPROVAL_CHANNELS = ['slack', 'email', 'webhook'] as const;
export type ApprovalChannel = (typeof APPROVAL_CHANNELS)[number];

/** Where a decision came from: the API (the inbox), a link sent through a channel, or the node's timeout. */
export type DecisionChannel = 'api' | ApprovalChannel | 'timeout';

export interface ApprovalRecipient {
  channel: ApprovalChannel;
  /** A Slack channel or user id, an e-mail address, or a webhook URL. */
  to: string;
  /** Who decides through this recipient's links (`resume_user_id`): `user_id`, else `<channel>:<to>`. */
  userId: string;
  /** Slack: the bot's or the user's token. */
  mode?: 'bot' | 'user';
  /** E-mail: the provider (the SendEmailNode's) and the sender. */
  provider?: 'resend' | 'sendgrid';
  from?: string;
}

/** Why a message with approval links goes out: the pause opened, a reminder, an escalation. */
export const APPROVAL_NOTICES = ['notify', 'remind', 'escalate'] as const;
export type ApprovalNotice = (typeof APPROVAL_NOTICES)[number];

/** A message's record id: its pause's, why it went, and its recipient's place among that notice's (from 1, no gaps). */
export const approvalDeliveryId = (pauseId: string, notice: ApprovalNotice, n: number): string =>
  `${pauseId}:${notice}:${n}`;

export type TimeoutOutcome = 'approve' | 'decline' | 'fail';

export interface ApprovalPlan {
  notify: ApprovalRecipient[];
  escalateTo: ApprovalRecipient[];
  remindAfterMs: number | null;
  escalateAfterMs: number | null;
  timeoutMs: number | null;
  onTimeout: TimeoutOutcome;
  approvalsRequired: number;
  declineRequires: number;
  /** Whether a link's page offers OVERRIDE. */
  allowOverride: boolean;
  /** Who may decide (`approvers`), or null: anyone allowed to decide pauses. */
  approvers: Approvers | null;
}

/**
 * The node's `approvers`: the users named by id, and every user whose role is one of `roles`
 * (exactly those roles: an admin is not an approver of a pause that names only `builder`).
 */
export interface Approvers {
  users: string[];
  roles: string[];
}

/** Who decides, as the api established it: their id and, for an enabled user, their role (else null). */
export interface DeciderRole {
  userId: string;
  role?: string | null;
}

/** Whether this decider may decide a pause with these approvers (null: anyone who may decide pauses). */
export function mayDecide(approvers: Approvers | null, decider: DeciderRole): boolean {
  if (approvers === null) return true;
  if (approvers.users.includes(decider.userId)) return true;
  return typeof decider.role === 'string' && approvers.roles.includes(decider.role);
}

/** One decision on a pause, as its history shows it. */
export interface PauseDecision {
  user_id: string;
  /** The user's username when the decider is a user (`UA…`), else null (absent in decisions recorded before it). */
  username?: string | null;
  action: PauseAction;
  channel: DecisionChannel;
  time: string;
  comments: string | null;
}

const positiveMs = (value: unknown): number | null => {
  const n = Number(value ?? 0);
  return Number.isFinite(n) && n > 0 ? n * 1000 : null;
};

const count = (value: unknown): number => {
  const n = Number(value ?? 1);
  return Number.isInteger(n) && n >= 1 ? n : 1;
};

function recipients(value: unknown): ApprovalRecipient[] {
  if (!Array.isArray(value)) return [];
  const out: ApprovalRecipient[] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const r = item as Record<string, unknown>;
    const channel = APPROVAL_CHANNELS.find((c) => c === r.channel);
    if (!channel || typeof r.to !== 'string' || !r.to) continue;
    out.push({
      channel,
      to: r.to,
      userId: typeof r.user_id === 'string' && r.user_id ? r.user_id : `${channel}:${r.to}`,
      ...(r.mode === 'user' || r.mode === 'bot' ? { mode: r.mode } : {}),
      ...(r.provider === 'resend' || r.provider === 'sendgrid' ? { provider: r.provider } : {}),
      ...(typeof r.from === 'string' ? { from: r.from } : {}),
    });
  }
  return out;
}

/**
 * `on_timeout` (lower case, this feature's) wins over the older `timeout_action` (APPROVE or
 * DECLINE, DECLINE by default).
 */
function timeoutOutcome(config: Record<string, unknown>): TimeoutOutcome {
  const explicit = config.on_timeout;
  if (explicit === 'approve' || explicit === 'decline' || explicit === 'fail') return explicit;
  return config.timeout_action === 'APPROVE' ? 'approve' : 'decline';
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** Read as saved; an `approvers` that is not an object is none (the save-time rules refuse one). */
function approversOf(value: unknown): Approvers | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const a = value as Record<string, unknown>;
  return { users: strings(a.users), roles: strings(a.roles) };
}

export function approvalPlan(config: Record<string, unknown>): ApprovalPlan {
  return {
    notify: recipients(config.notify),
    escalateTo: recipients(config.escalate_to),
    remindAfterMs: positiveMs(config.remind_after_seconds),
    escalateAfterMs: positiveMs(config.escalate_after_seconds),
    timeoutMs: positiveMs(config.timeout_seconds),
    onTimeout: timeoutOutcome(config),
    approvalsRequired: count(config.approvals_required),
    declineRequires: count(config.decline_requires),
    allowOverride: config.allow_override === true,
    approvers: approversOf(config.approvers),
  };
}

/** Whether the pause needs more than today's wait: messages to send, timers besides the timeout, or a quorum. */
export function usesApprovalFlow(plan: ApprovalPlan): boolean {
  return (
    plan.notify.length > 0 ||
    plan.escalateTo.length > 0 ||
    plan.remindAfterMs !== null ||
    plan.approvalsRequired > 1 ||
    plan.declineRequires > 1
  );
}

/**
 * The outcome of the decisions so far: APPROVE (or OVERRIDE) once `approvalsRequired` approved,
 * DECLINE once `declineRequires` declined, else none yet. One decision per person counts.
 */
export function tally(
  decisions: readonly Pick<PauseDecision, 'action'>[],
  quorum: { approvalsRequired: number; declineRequires: number },
): 'approved' | 'declined' | null {
  const declines = decisions.filter((d) => d.action === 'DECLINE').length;
  if (declines >= quorum.declineRequires) return 'declined';
  if (decisions.length - declines >= quorum.approvalsRequired) return 'approved';
  return null;
}

/** How one message with approval links went, as the run's `pause.notification` event says. */
export interface ApprovalDeliveryOutcome {
  pause_id: string;
  delivery_id: string;
  notice: ApprovalNotice;
  channel: ApprovalChannel;
  to: string;
  user_id: string;
  status: 'sent' | 'failed';
  error: string | null;
}
