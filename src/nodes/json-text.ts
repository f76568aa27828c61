/**
 * JSON text in the layout of Python's `json.dumps` (`", "` and `": "` separators), so the
 * `output_json_schema` strings we publish read like the ones PySpur stores.
 */
export function pyJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pyJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

/**
 * `{"type": "object", "properties": {…} }` in the exact spacing of PySpur's hand-written default
 * (note the spaces before the closing braces), for a map of field → JSON Schema.
 */
export function objectSchemaText(properties: Record<string, unknown>): string {
  const fields = Object.entries(properties).map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`);
  return `{"type": "object", "properties": {${fields.join(', ')} } }`;
}

/** The `output_schema` type name for a JSON Schema (`string`, `array`, …); unions count as objects. */
export function typeNameOf(schema: unknown): string {
  if (schema !== null && typeof schema === 'object' && 'type' in schema && typeof schema.type === 'string') {
    return schema.type;
  }
  return 'object';
}
