import { z } from '../../zod';
import { PAUSE_ACTIONS } from '../../engine/statuses';
import { APPROVAL_CHANNELS } from '../../engine/approvals';
import { DefinitionStructureSchema } from '../../definitions/definition.schema';
import { RunResponse } from '../../runs/response.schemas';
import { withoutReservedKey } from '../../runs/values';

export const ResumeRunRequest = z.object({
  inputs: withoutReservedKey(z.record(z.string(), z.unknown())),
  user_id: z.string().min(1).max(200),
  action: z.enum(PAUSE_ACTIONS),
  comments: z.string().max(10_000).nullable().default(null),
});
export type ResumeRunInput = z.output<typeof ResumeRunRequest>;

export const PauseDecisionResponse = z
  .object({
    /** Who decided: a user's id (`UA…`), the name an operator's key gave, a link's recipient, or `system:timeout`. */
    user_id: z.string(),
    /** The user's username when `user_id` is a user's, else null. */
    username: z.string().nullable(),
    action: z.enum(PAUSE_ACTIONS),
    channel: z.enum(['api', ...APPROVAL_CHANNELS, 'timeout']),
    time: z.string(),
    comments: z.string().nullable(),
  })
  .openapi('PauseDecision');

export const ApprovalDeliveryResponse = z
  .object({
    id: z.string(),
    notice: z.enum(['notify', 'remind', 'escalate']),
    channel: z.enum(APPROVAL_CHANNELS),
    to: z.string(),
    user_id: z.string(),
    status: z.enum(['pending', 'sent', 'failed', 'skipped']),
    attempts: z.number().int(),
    error: z.string().nullable(),
    updated_at: z.string(),
  })
  .openapi('ApprovalDelivery');

export const PauseHistoryResponse = z
  .object({
    id: z.string(),
    run_id: z.string(),
    node_id: z.string(),
    pause_message: z.string().nullable(),
    pause_time: z.string(),
    resume_time: z.string().nullable(),
    resume_user_id: z.string().nullable(),
    resume_action: z.enum(PAUSE_ACTIONS).nullable(),
    input_data: z.record(z.string(), z.unknown()).nullable(),
    comments: z.string().nullable(),
    /** Beyond PySpur: every decision (several when the node asks for a quorum). */
    decisions: z.array(PauseDecisionResponse),
    /** Beyond PySpur: the messages with approval links and how each went. */
    notifications: z.array(ApprovalDeliveryResponse),
  })
  .openapi('PauseHistoryResponse');
export type PauseHistoryResponse = z.output<typeof PauseHistoryResponse>;

export const PausedWorkflowResponse = z.object({
  run: RunResponse,
  current_pause: PauseHistoryResponse,
  /** The run's definition, plus the workflow's name (the UI's inbox shows it). */
  workflow: DefinitionStructureSchema.extend({ name: z.string() }),
});
