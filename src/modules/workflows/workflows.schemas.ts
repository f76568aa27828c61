import { z } from 'zod';
import { DefinitionStructureSchema, WorkflowDefinitionSchema } from './definition.schema';

export const WorkflowIdParams = z.object({ workflow_id: z.string().min(1).max(200) });

export const WorkflowCreateRequest = z.object({
  name: z.string().max(500),
  description: z.string().max(10_000).default(''),
  definition: WorkflowDefinitionSchema.nullable().default(null),
});
export type WorkflowCreateInput = z.output<typeof WorkflowCreateRequest>;

export const WorkflowResponse = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  definition: DefinitionStructureSchema,
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type WorkflowResponse = z.input<typeof WorkflowResponse>;

export const WorkflowVersionResponse = z.object({
  version: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  definition: z.unknown(),
  definition_hash: z.string(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type WorkflowVersionResponse = z.input<typeof WorkflowVersionResponse>;

export const OutputVariable = z.object({ node_id: z.string(), variable_name: z.string(), prefixed_variable: z.string() });
export type OutputVariable = z.output<typeof OutputVariable>;

export const UploadTestFilesForm = z.object({ workflow_id: z.string().min(1).max(200), node_id: z.string().min(1).max(200) });
export const UploadTestFilesResponse = z.record(z.string(), z.array(z.string()));
