import { z } from 'zod';
import { objectSchemaText, pyJson, typeNameOf } from './json-text.js';

export const DEFAULT_OUTPUT_JSON_SCHEMA = '{"type": "object", "properties": {"output": {"type": "string"} } }';

/** `output_schema` field: output field name → type name (`string`, `int`, `list`, …). */
export function outputSchemaField(defaults: Record<string, string>) {
  return z.record(z.string(), z.string()).default(() => ({ ...defaults }));
}

/** Fields every node config has. Loose: unknown keys are accepted and kept. */
export const baseConfig = z.looseObject({
  output_schema: outputSchemaField({ output: 'string' }),
  output_json_schema: z.string().default(DEFAULT_OUTPUT_JSON_SCHEMA),
  has_fixed_output: z.boolean().default(false),
});

/** A node's config model: the base fields, then `shape` (same-named keys keep their base position). */
export function extendConfig<S extends z.ZodRawShape>(shape: S) {
  return baseConfig.extend(shape);
}

/**
 * Base-field overrides for a node whose outputs are user-defined but start from given fields:
 * `output_schema` and the matching `output_json_schema` text.
 */
export function dynamicOutputDefaults(properties: Record<string, Record<string, unknown>>) {
  const names = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, typeNameOf(v)]));
  return {
    output_schema: outputSchemaField(names),
    output_json_schema: z.string().default(objectSchemaText(properties)),
  };
}

/** JSON Schema of a zod model as the frontend sees it (input side, no `$schema`). */
export function toPlainJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json: Record<string, unknown> = { ...z.toJSONSchema(schema, { io: 'input' }) };
  delete json.$schema;
  return json;
}

/**
 * Base-field overrides for fixed-output nodes: like PySpur, `output_json_schema` defaults to the
 * JSON Schema of the node's output model (the engine validates outputs against it), and
 * `output_schema` names the same fields so both describe one shape.
 */
export function fixedOutputDefaults(output: z.ZodObject) {
  const json = toPlainJsonSchema(output);
  const properties = (json.properties ?? {}) as Record<string, unknown>;
  const names = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, typeNameOf(v)]));
  return {
    output_schema: outputSchemaField(names),
    output_json_schema: z.string().default(pyJson(json)),
    has_fixed_output: z.boolean().default(true),
  };
}

/** Config model of a fixed-output node: base fields with fixed-output defaults, then `shape`. */
export function fixedOutputConfig<S extends z.ZodRawShape>(output: z.ZodObject, shape: S) {
  return baseConfig.extend(fixedOutputDefaults(output)).extend(shape);
}
