import { z } from 'zod';
import type { WorkflowDefinition } from '../../definitions/definition.schema';

type Node = WorkflowDefinition['nodes'][number];

/** PySpur's field type names (InputNode `output_schema`) as JSON Schema types. */
const JSON_TYPES: Record<string, string> = {
  string: 'string',
  str: 'string',
  integer: 'integer',
  int: 'integer',
  number: 'number',
  float: 'number',
  boolean: 'boolean',
  bool: 'boolean',
  list: 'array',
  array: 'array',
  dict: 'object',
  object: 'object',
};

const topLevel = (def: WorkflowDefinition, type: string): Node | undefined =>
  def.nodes.find((n) => n.node_type === type && n.parent_id === null);

function fieldsOf(node: Node | undefined, key: 'output_schema' | 'output_map'): string[] {
  const value = node?.config?.[key];
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [];
}

/** The InputNode's fields, each with its JSON Schema type (undefined: a type name Spur does not map, so any value). */
function inputFields(def: WorkflowDefinition): { name: string; type: string | undefined }[] {
  const input = topLevel(def, 'InputNode');
  const schema = (input?.config?.output_schema ?? {}) as Record<string, unknown>;
  return fieldsOf(input, 'output_schema').map((name) => ({
    name,
    type: JSON_TYPES[String(schema[name]).toLowerCase()],
  }));
}

/** A published workflow's arguments: its InputNode's fields, each required, typed as declared. */
export function workflowInputSchema(def: WorkflowDefinition): Record<string, unknown> & { type: 'object' } {
  const fields = inputFields(def);
  const properties = Object.fromEntries(fields.map(({ name, type }) => [name, type ? { type } : {}]));
  return { type: 'object', properties, ...(fields.length > 0 ? { required: fields.map((f) => f.name) } : {}) };
}

/** Any value, but present: an untyped field is still required. */
const present = z.unknown().refine((v) => v !== undefined, 'Required');

/** What each JSON Schema type of workflowInputSchema accepts, as zod checks it. */
const ZOD_TYPES: Record<string, z.ZodType> = {
  string: z.string(),
  integer: z.number().int(),
  number: z.number(),
  boolean: z.boolean(),
  array: z.array(z.unknown()),
  object: z.record(z.string(), z.unknown()),
};

/**
 * The same rules as workflowInputSchema, as a zod schema a call's arguments are checked with
 * before a run starts. Arguments the schema does not name are let through, as the JSON Schema
 * (which does not forbid them) lets them.
 */
export function workflowArgumentsSchema(def: WorkflowDefinition): z.ZodType<Record<string, unknown>> {
  const shape = Object.fromEntries(
    inputFields(def).map(({ name, type }) => [name, (type && ZOD_TYPES[type]) ?? present]),
  );
  return z.looseObject(shape);
}

/**
 * A published workflow's result: its OutputNode's fields. Untyped: a field is whatever its node
 * produced, and a client checks a result against this schema, so a guessed type would reject a
 * valid run's output.
 */
export function workflowOutputSchema(def: WorkflowDefinition): (Record<string, unknown> & { type: 'object' }) | null {
  const output = topLevel(def, 'OutputNode');
  if (!output) return null;
  const names = [...new Set([...fieldsOf(output, 'output_map'), ...fieldsOf(output, 'output_schema')])];
  return { type: 'object', properties: Object.fromEntries(names.map((name) => [name, {}])) };
}

/** The ids of the nodes whose outputs make the tool's result: the OutputNode's, else none (every output). */
export function outputNodeId(def: WorkflowDefinition): string | undefined {
  return topLevel(def, 'OutputNode')?.id;
}

export function inputNodeId(def: WorkflowDefinition): string | undefined {
  return topLevel(def, 'InputNode')?.id;
}
