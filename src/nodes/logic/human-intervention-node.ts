import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';
import { ROLES, USER_ID_PATTERN } from '../../contracts/roles';

const userId = z.string().min(1).max(200).optional();

/**
 * Who gets a pause's links, and through what: a Slack channel or user, an e-mail address, a webhook
 * URL. Strict (PySpur has no recipients): a field Spur does not know, such as a per-recipient
 * `secret` for the webhook, is refused rather than ignored, so nobody trusts a signature never made.
 */
export const approvalRecipient = z.discriminatedUnion('channel', [
  z.strictObject({
    channel: z.literal('slack'),
    to: z.string().min(1).max(200),
    /** Whose token posts it (SLACK_BOT_TOKEN or SLACK_USER_TOKEN), as the SlackNotifyNode's `mode`. */
    mode: z.enum(['bot', 'user']).default('bot'),
    user_id: userId,
  }),
  z.strictObject({
    channel: z.literal('email'),
    to: z.email().max(320),
    from: z.string().min(1).max(320),
    provider: z.enum(['resend', 'sendgrid']).default('resend'),
    user_id: userId,
  }),
  z.strictObject({
    channel: z.literal('webhook'),
    to: z.url({ protocol: /^https?$/ }).max(2000),
    user_id: userId,
  }),
]);

const seconds = z
  .number()
  .positive()
  .max(365 * 24 * 3600)
  .nullable()
  .optional();
const people = z.number().int().min(1).max(50);

/**
 * Who may decide the pause: users by id and every user of one of the roles (exactly those roles),
 * by any channel. Absent: anyone whose role may decide pauses (`approver` and above).
 */
export const approvers = z
  .strictObject({
    users: z.array(z.string().regex(USER_ID_PATTERN, 'a user id (UA…)')).max(100).default([]),
    roles: z.array(z.enum(ROLES)).max(ROLES.length).default([]),
  })
  .refine((a) => a.users.length + a.roles.length > 0, 'names no user and no role: nobody could decide the pause');

/** Not in PySpur: links that reach people, reminders, escalation, what a timeout does, a quorum (docs/approvals.md). */
export const approvalFields = {
  notify: z.array(approvalRecipient).max(50).default([]),
  remind_after_seconds: seconds,
  escalate_after_seconds: seconds,
  escalate_to: z.array(approvalRecipient).max(50).default([]),
  on_timeout: z.enum(['approve', 'decline', 'fail']).nullable().optional(),
  approvals_required: people.default(1),
  decline_requires: people.default(1),
  /** Whether a link's page offers OVERRIDE (the API always does). */
  allow_override: z.boolean().default(false),
  approvers: approvers.nullable().optional(),
};

const config = extendConfig({
  message: z.string().default('Human intervention required'),
  /** Kept for compatibility: only dependents of the node are ever blocked. */
  block_only_dependent_nodes: z.boolean().default(true),
  /** Not in PySpur: a durable deadline after which `timeout_action` is applied by `system:timeout`. */
  timeout_seconds: z
    .number()
    .positive()
    .max(365 * 24 * 3600)
    .nullable()
    .optional(),
  timeout_action: z.enum(['APPROVE', 'DECLINE']).default('DECLINE'),
  ...approvalFields,
});

/** Pauses the run until a human acts; dependents wait, other branches go on. */
export const humanInterventionNode: NodeTypeDefinition<typeof config> = {
  name: 'HumanInterventionNode',
  displayName: 'HumanIntervention',
  description: 'Asks a human and waits for the answer; the arguments are shown to the human.',
  category: 'Logic',
  visualTag: { acronym: 'HIN', color: '#6610F2' },
  config,
  input: openObject(),
  output: openObject(),
};
