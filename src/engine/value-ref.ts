/**
 * Values by reference (claim check). A value whose JSON is over the configured threshold is
 * stored once (src/db/value-store.ts) and travels through Temporal histories, activity payloads
 * and run documents as this small object instead. Workflow code may hold and move refs but never
 * reads through them; activities resolve them before a node runs, the api before it answers.
 * Pure: no I/O, safe inside the workflow sandbox.
 */
export const VALUE_REF_KEY = '__spur_value_ref__';

export interface ValueRefTarget {
  /** `<scope>/<sha256 of the JSON text>`: the scope is the run, so a run's values go with it. */
  id: string;
  /** Length of the stored JSON text in bytes. */
  bytes: number;
}

export interface ValueRef {
  [VALUE_REF_KEY]: ValueRefTarget;
}

export function isValueRef(value: unknown): value is ValueRef {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== VALUE_REF_KEY) return false;
  const target = (value as Record<string, unknown>)[VALUE_REF_KEY] as Partial<ValueRefTarget> | null;
  return target !== null && typeof target === 'object' && typeof target.id === 'string' && typeof target.bytes === 'number';
}

export function valueRef(id: string, bytes: number): ValueRef {
  return { [VALUE_REF_KEY]: { id, bytes } };
}

/** Whether any ref sits anywhere inside `value` (cheap walk; no JSON text is built). */
export function containsValueRef(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (isValueRef(value)) return true;
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.some(containsValueRef);
}
