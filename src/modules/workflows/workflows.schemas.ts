import { z } from '../../zod';
import { DefinitionStructureSchema, WorkflowDefinitionSchema } from '../../definitions/definition.schema';
import { definitionLimitIssues } from '../../definitions/definition-limits';
import type { DefinitionLimits } from '../../config/settings';

export const WorkflowIdParams = z.object({ workflow_id: z.string().min(1).max(200) });

export const WorkflowCreateRequest = z.object({
  name: z.string().max(500),
  description: z.string().max(10_000).default(''),
  definition: WorkflowDefinitionSchema.nullable().default(null),
});
export type WorkflowCreateInput = z.output<typeof WorkflowCreateRequest>;

/** The create/replace body within the installation's limits: a definition over them is a 422 like any rule's. */
export function workflowCreateRequest(limits: DefinitionLimits) {
  return WorkflowCreateRequest.superRefine((body, ctx) => {
    if (!body.definition) return;
    for (const issue of definitionLimitIssues(body.definition, limits)) {
      ctx.addIssue({
        code: 'custom',
        message: issue.message,
        path: ['definition', ...issue.path],
        params: { pydanticType: 'value_error' },
      });
    }
  });
}

/** Beyond PySpur: a paused workflow starts no run (docs/runs.md#pausing-a-workflow). */
export const WorkflowPauseState = z
  .object({
    reason: z.string().nullable(),
    since: z.iso.datetime(),
    by: z.string().nullable().openapi({ description: 'Who paused it, as runs name who started them' }),
    hold_webhooks: z.boolean(),
    held_deliveries: z.number().int().openapi({ description: 'Webhook deliveries held, started when it is resumed' }),
  })
  .openapi('WorkflowPauseState');
export type WorkflowPauseState = z.input<typeof WorkflowPauseState>;

export const WorkflowResponse = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  definition: DefinitionStructureSchema,
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  paused: WorkflowPauseState.nullable().openapi({ description: 'null: runs start; else the pause that stops them' }),
});
export type WorkflowResponse = z.input<typeof WorkflowResponse>;

export const OutputVariable = z.object({
  node_id: z.string(),
  variable_name: z.string(),
  prefixed_variable: z.string(),
});
export type OutputVariable = z.output<typeof OutputVariable>;

export const UploadTestFilesForm = z.object({
  workflow_id: z.string().min(1).max(200),
  node_id: z.string().min(1).max(200),
});
export const UploadTestFilesResponse = z.record(z.string(), z.array(z.string()));
