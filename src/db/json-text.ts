/**
 * User JSON (definitions, configs, inputs, outputs) may hold keys with `.` or `$`, arrays inside
 * arrays and any unicode. FerretDB v1 refuses such documents, so these payloads are stored as JSON
 * text: both MongoDB and FerretDB keep the string byte for byte.
 */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value ?? null);
}

export function fromJsonText<T = unknown>(text: string | null | undefined): T | null {
  if (text === null || text === undefined) return null;
  return JSON.parse(text) as T;
}
