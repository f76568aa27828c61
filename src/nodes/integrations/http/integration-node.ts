import type { z } from 'zod';
import { fixedOutputConfig } from '../../base-config.js';
import { NodeExecutionError } from '../../errors.js';
import { openObject } from '../../shared-models.js';
import { renderTemplate } from '../../templates.js';
import type { NodeCategory, NodeExecutionContext, NodeInput, NodeTypeDefinition } from '../../types.js';

type ConfigOf<Shape extends z.ZodRawShape> = ReturnType<typeof fixedOutputConfig<Shape>>;

/**
 * What an integration node declares: its catalogue entry, its config fields (PySpur's, with its
 * defaults), its output model, and `run`, which makes the requests and maps the answers onto
 * the output. Everything else (credentials, base URLs, errors, retries, cancellation) is the
 * service client's job.
 */
export interface IntegrationNodeSpec<Out extends z.ZodObject, Shape extends z.ZodRawShape> {
  name: string;
  displayName: string;
  category: NodeCategory;
  /** `ACRONYM #COLOR` */
  tag: string;
  logo?: string;
  categoryLabel?: string;
  output: Out;
  config: Shape;
  /** Config fields a model may set when the node is an agent's tool (NodeTypeDefinition.modelSettable). */
  modelSettable?: readonly (keyof Shape & string)[];
  /** Set on nodes that post, send or write (NodeTypeDefinition.acts): they send nothing in a dry run. */
  acts?: true;
  run(config: z.output<ConfigOf<Shape>>, input: NodeInput, ctx: NodeExecutionContext): Promise<z.input<Out>>;
}

export function integrationNode<Out extends z.ZodObject, Shape extends z.ZodRawShape>(
  spec: IntegrationNodeSpec<Out, Shape>,
): NodeTypeDefinition<ConfigOf<Shape>> {
  const [acronym = '', color = ''] = spec.tag.split(' ');
  const config = fixedOutputConfig(spec.output, spec.config) as ConfigOf<Shape>;
  return {
    name: spec.name,
    displayName: spec.displayName,
    category: spec.category,
    visualTag: { acronym, color },
    config,
    input: openObject(),
    output: spec.output,
    ...(spec.logo ? { logo: spec.logo } : {}),
    ...(spec.categoryLabel ? { categoryLabel: spec.categoryLabel } : {}),
    ...(spec.modelSettable ? { modelSettable: spec.modelSettable } : {}),
    ...(spec.acts ? { acts: () => true } : {}),
    async execute(cfg, input, ctx) {
      const output = spec.output.safeParse(await spec.run(cfg, input, ctx));
      if (output.success) return output.data as Record<string, unknown>;
      throw new NodeExecutionError(
        `${spec.name} built an output that does not match its model: ${output.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    },
  };
}

/**
 * A `*_template` field rendered over the input; an empty template means the first string value
 * in the input (a predecessor's output field when no top-level value is a string).
 */
export async function renderOrFirstString(template: string, input: NodeInput, field: string): Promise<string> {
  if (template.trim()) return renderTemplate(template, input, field);
  const values = Object.values(input);
  const nested = values.flatMap((v) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.values(v) : [],
  );
  const found = [...values, ...nested].find((v): v is string => typeof v === 'string');
  if (found === undefined)
    throw new NodeExecutionError(`${field} is empty and the input holds no string value to use instead`);
  return found;
}

/** A config value that must not be empty for the request to make sense. */
export function required(value: string | null | undefined, field: string): string {
  const trimmed = value?.trim();
  if (!trimmed) throw new NodeExecutionError(`${field} is required`);
  return trimmed;
}
