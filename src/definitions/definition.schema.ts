import { z } from '../zod';
import { checkDefinitionRules } from './definition-rules';
import { normalizeDefinition } from './definition-normalize';

/** Numbers, or numeric strings as pydantic coerces them (`"12.5"` → 12.5). */
const numberLike = z.union([
  z.number(),
  z
    .string()
    .trim()
    .regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/)
    .transform(Number),
]);

export const SPUR_TYPES = ['workflow', 'chatbot', 'agent'] as const;
/** Lowercase on the wire as PySpur emits it; either case accepted on input. */
export const SpurTypeSchema = z.preprocess((v) => (typeof v === 'string' ? v.toLowerCase() : v), z.enum(SPUR_TYPES));

export const WorkflowLinkSchema = z.object({
  source_id: z.string(),
  target_id: z.string(),
  source_handle: z.string().nullable().default(null),
  target_handle: z.string().nullable().default(null),
});

export const WorkflowNodeSchema = z.object({
  id: z.string().min(1),
  title: z.string().default(''),
  parent_id: z.string().nullable().default(null),
  node_type: z.string().min(1),
  config: z.record(z.string(), z.unknown()).default({}),
  coordinates: z.object({ x: numberLike, y: numberLike }).nullable().default(null),
  dimensions: z.object({ width: numberLike, height: numberLike }).nullable().default(null),
  get subworkflow() {
    return DefinitionStructureSchema.nullable().default(null);
  },
});

/** The shape alone; the graph rules and rewrites are applied by `WorkflowDefinitionSchema`. */
export const DefinitionStructureSchema = z
  .object({
    nodes: z.array(WorkflowNodeSchema),
    links: z.array(WorkflowLinkSchema),
    test_inputs: z.array(z.record(z.string(), z.unknown())).default([]),
    spur_type: SpurTypeSchema.default('workflow'),
  })
  .openapi('WorkflowDefinition'); // a named component: subworkflows refer to it instead of recursing

export type WorkflowNode = z.output<typeof WorkflowNodeSchema>;
export type WorkflowLink = z.output<typeof WorkflowLinkSchema>;
export type WorkflowDefinition = z.output<typeof DefinitionStructureSchema>;

/** A definition as saved: shape checked, graph rules enforced, PySpur's rewrites applied. */
export const WorkflowDefinitionSchema = DefinitionStructureSchema.superRefine((def, ctx) => {
  for (const issue of checkDefinitionRules(def)) {
    ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path, params: { pydanticType: issue.kind } });
  }
}).transform(normalizeDefinition);
