/**
 * Python's `bool(x)` for JSON-like values, as PySpur's router `is_empty` / `is_not_empty` use it:
 * falsy are null/undefined (None), false, 0 (and -0), '', [] and {} (no own keys). NaN is truthy,
 * as in Python.
 */
export function isTruthy(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'bigint') return value !== 0n;
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof Map || value instanceof Set) return value.size > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}
