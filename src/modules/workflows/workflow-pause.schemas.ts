import { z } from '../../zod';
import { WorkflowPauseState } from './workflows.schemas';

export const PauseWorkflowRequest = z
  .strictObject({
    reason: z.string().max(2000).nullable().optional().openapi({ description: 'Shown in every refused start' }),
    hold_webhooks: z.boolean().default(true).openapi({
      description:
        'true: webhook deliveries are held (202) and start, in the order they arrived, when it is resumed; false: they are refused (409)',
    }),
  })
  .default({ hold_webhooks: true })
  .openapi('PauseWorkflowRequest');
export type PauseWorkflowInput = z.output<typeof PauseWorkflowRequest>;

export const PauseWorkflowResponse = z
  .object({ workflow_id: z.string(), paused: WorkflowPauseState })
  .openapi('PauseWorkflowResponse');
export type PauseWorkflowResponse = z.input<typeof PauseWorkflowResponse>;

export const ResumeWorkflowResponse = z
  .object({
    workflow_id: z.string(),
    paused: z.null(),
    released_deliveries: z.number().int().openapi({ description: 'Held webhook deliveries started, oldest first' }),
  })
  .openapi('ResumeWorkflowResponse');
export type ResumeWorkflowResponse = z.input<typeof ResumeWorkflowResponse>;
