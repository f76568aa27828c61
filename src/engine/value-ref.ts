/**
 * Values by reference (claim check). A value whose JSON is over the configured threshold is
 * stored once (src/db/value-store.ts) and travels through Temporal histories, activity payloads
 * and run documents as this small object instead. Workflow code may hold and move refs but never
 * reads through them; activities resolve them before a node runs, the api before it answers.
 * The shape alone proves nothing: user content can hold it too. Only a ref whose `seal` Spur's
 * key made (src/db/value-seal.ts) is ever read through; any other is plain data.
 * Pure: no I/O, safe inside the workflow sandbox.
 */
export const VALUE_REF_KEY = '__spur_value_ref__';

export interface ValueRefTarget {
  /** `<scope>/<sha256 of the JSON text>`: the scope is the run, so a run's values go with it. */
  id: string;
  /** Length of the stored JSON text in bytes. */
  bytes: number;
  /** HMAC of id and bytes under a key derived from SPUR_SECRET_KEY: written by Spur's value store only. */
  seal: string;
}

export interface ValueRef {
  [VALUE_REF_KEY]: ValueRefTarget;
}

export function isValueRef(value: unknown): value is ValueRef {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== VALUE_REF_KEY) return false;
  const target = (value as Record<string, unknown>)[VALUE_REF_KEY] as Partial<ValueRefTarget> | null;
  return (
    target !== null &&
    typeof target === 'object' &&
    typeof target.id === 'string' &&
    typeof target.bytes === 'number' &&
    typeof target.seal === 'string'
  );
}

export function valueRef(id: string, bytes: number, seal: string): ValueRef {
  return { [VALUE_REF_KEY]: { id, bytes, seal } };
}

/** Whether a value `isRef` accepts sits anywhere inside `value` (cheap walk; no JSON text is built). */
export function containsValueRef(value: unknown, isRef: (v: unknown) => boolean = isValueRef): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (isRef(value)) return true;
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.some((child) => containsValueRef(child, isRef));
}

/**
 * Where the reserved key first appears in a client's value, whatever the object around it holds
 * (null when nowhere): a client may not send anything ref-like, sealed or not.
 */
export function reservedKeyPath(value: unknown): (string | number)[] | null {
  return pathTo(value, (v) => (Object.hasOwn(v, VALUE_REF_KEY) ? [VALUE_REF_KEY] : null));
}

/** Where the first value `isRef` accepts sits in `value` (null when nowhere). */
export function valueRefPath(value: unknown, isRef: (v: unknown) => boolean): (string | number)[] | null {
  return pathTo(value, (v) => (isRef(v) ? [] : null));
}

/** The path to the first object `found` picks (plus what it adds), depth first; null when none. */
function pathTo(value: unknown, found: (v: object) => (string | number)[] | null): (string | number)[] | null {
  const path: (string | number)[] = [];
  const walk = (v: unknown): boolean => {
    if (v === null || typeof v !== 'object') return false;
    const here = Array.isArray(v) ? null : found(v);
    if (here) {
      path.push(...here);
      return true;
    }
    const entries: [string | number, unknown][] = Array.isArray(v)
      ? v.map((child, i) => [i, child])
      : Object.entries(v);
    for (const [key, child] of entries) {
      path.push(key);
      if (walk(child)) return true;
      path.pop();
    }
    return false;
  };
  return walk(value) ? path : null;
}
