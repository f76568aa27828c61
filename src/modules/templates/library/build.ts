import { objectSchemaText } from '../../../nodes/json-text';

/** Terse builders for template definitions: nodes laid out left to right, PySpur's link shape. */
export type Fields = Record<string, 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object'>;

const PY_TYPE: Record<Fields[string], string> = {
  string: 'string',
  integer: 'int',
  number: 'float',
  boolean: 'bool',
  array: 'list',
  object: 'dict',
};

/** `output_schema` (PySpur's type names) and the matching `output_json_schema`, as the editor keeps both. */
export function outputs(fields: Fields) {
  return {
    output_schema: Object.fromEntries(Object.entries(fields).map(([k, t]) => [k, PY_TYPE[t]])),
    output_json_schema: objectSchemaText(Object.fromEntries(Object.entries(fields).map(([k, t]) => [k, { type: t }]))),
  };
}

export function node(
  id: string,
  nodeType: string,
  column: number,
  config: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    id,
    title: id,
    node_type: nodeType,
    parent_id: null,
    config,
    coordinates: { x: column * 420, y: 120 },
    ...extra,
  };
}

export function link(source: string, target: string) {
  return { source_id: source, target_id: target, source_handle: source, target_handle: source };
}

export function llmInfo(maxTokens = 1024) {
  return { model: 'openai/gpt-4o-mini', max_tokens: maxTokens, temperature: 0.2, top_p: 0.9 };
}
