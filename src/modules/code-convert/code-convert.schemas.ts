import { z } from 'zod';

export const CodeWorkflowIdParams = z.object({ workflow_id: z.string().min(1).max(200) });

/** A query flag as pydantic reads a bool: true/false, 1/0, yes/no, on/off, t/f, y/n, any case. */
const queryFlag = z
  .preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
    z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off', 't', 'f', 'y', 'n']).default('true'),
  )
  .transform((v) => ['true', '1', 'yes', 'on', 't', 'y'].includes(v));

export const CodeLayoutQuery = z.object({
  preserve_coordinates: queryFlag,
  preserve_dimensions: queryFlag,
});
export type CodeLayout = z.output<typeof CodeLayoutQuery>;

/** PySpur's WorkflowCodeRequest: the code (required in practice: its absence is a 400, as PySpur answers). */
export const WorkflowCodeRequest = z.object({
  code: z.string().nullable().default(null),
  /** code_to_definition: a stored workflow whose layout the result keeps for nodes the code did not place. */
  workflow_id: z.string().max(200).nullable().default(null),
  preserve_coordinates: z.boolean().default(true),
  preserve_dimensions: z.boolean().default(true),
});
export type WorkflowCodeInput = z.output<typeof WorkflowCodeRequest>;

export const WorkflowCodeResponse = z.object({ code: z.string() });

/**
 * The frame of what the sandbox answers for workflow code: the user's output. Its name, description
 * and definition are then checked as a workflow's create request is (workflows.schemas.ts).
 */
export const SandboxAnswer = z.object({
  definition: z.record(z.string(), z.unknown()),
  name: z.unknown(),
  description: z.unknown(),
  /** Nodes the code gave no coordinates (the builder laid them out). */
  placed: z.array(z.string()),
});
