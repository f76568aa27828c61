import { createHash } from 'node:crypto';

/**
 * SHA-256 of canonical JSON (object keys sorted at every depth, no whitespace). Two definitions
 * that differ only in key order hash alike, so a run reuses the version that holds them.
 */
export function definitionHash(definition: unknown): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}
