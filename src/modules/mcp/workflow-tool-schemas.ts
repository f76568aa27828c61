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

/** A published workflow's arguments: its InputNode's fields, each required, typed as declared. */
export function workflowInputSchema(def: WorkflowDefinition): Record<string, unknown> & { type: 'object' } {
  const input = topLevel(def, 'InputNode');
  const schema = (input?.config?.output_schema ?? {}) as Record<string, unknown>;
  const names = fieldsOf(input, 'output_schema');
  const properties = Object.fromEntries(
    names.map((name) => {
      const type = JSON_TYPES[String(schema[name]).toLowerCase()];
      return [name, type ? { type } : {}];
    }),
  );
  return { type: 'object', properties, ...(names.length > 0 ? { required: names } : {}) };
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
