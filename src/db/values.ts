import type { Connection } from 'mongoose';
import { containsValueRef, valueRef, valueRefPath, type ValueRef } from '../engine/value-ref';
import { ForeignValueRefError, ValueTooLargeError } from './errors';
import { jsonWithValues } from './value-json';
import { type ValueSeal, createValueSeal } from './value-seal';
import { type ValueStore, createValueStore } from './value-store';

export interface ValueLimits {
  /** JSON over this many bytes travels by reference (SPUR_VALUE_REF_BYTES). */
  refAboveBytes: number;
  /** No value may be larger (SPUR_MAX_VALUE_BYTES). */
  maxBytes: number;
}

/** Below this a ref (~150 bytes of JSON) would save little: such a piece of a container is never stored alone. */
const REF_OVERHEAD = 256;

function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text);
}

/**
 * Values by reference over a ValueStore: `externalize` turns a plain value into one whose JSON is
 * at most `refAboveBytes`, storing its large parts; `resolve` turns refs back into plain values.
 * A container keeps its shape where it can (a node output `{text: <50 MB>}` becomes
 * `{text: <ref>}`), so the engine still sees the keys it routes on. Only refs sealed here are
 * read back (value-seal.ts): anything else of their shape is a plain value like any other.
 */
export function createValues(store: ValueStore, limits: ValueLimits, seals: ValueSeal) {
  const isRef = (value: unknown): value is ValueRef => seals.isSealed(value);
  const minPiece = Math.max(REF_OVERHEAD, limits.refAboveBytes / 8);

  /** `text`: the value's JSON when already at hand (a 50 MB string is not serialised again). */
  async function storeWhole(scope: string, value: unknown, text?: string): Promise<ValueRef> {
    const json = Buffer.from(text ?? JSON.stringify(value), 'utf8');
    const id = await store.put(scope, json);
    return valueRef(id, json.length, seals.seal(id, json.length));
  }

  async function shrink(scope: string, value: unknown, budget: number, size: number, text?: string): Promise<unknown> {
    if (size <= budget) return value;
    if (budget >= REF_OVERHEAD && value !== null && typeof value === 'object' && !isRef(value)) {
      const copy = (Array.isArray(value) ? [...(value as unknown[])] : { ...value }) as Record<string, unknown>;
      const big = Object.entries(copy)
        .map(([key, child]) => {
          const childText = JSON.stringify(child) ?? '';
          // Strings are stored as they are: keep their JSON for the store instead of building it twice.
          return {
            key,
            child,
            size: Buffer.byteLength(childText),
            text: typeof child === 'string' ? childText : undefined,
          };
        })
        .filter((e) => e.size > minPiece)
        .sort((a, b) => b.size - a.size);
      let total = size;
      for (const e of big) {
        if (total <= budget) break;
        const next = await shrink(scope, e.child, budget - (total - e.size), e.size, e.text);
        copy[e.key] = next;
        total += jsonBytes(next) - e.size;
      }
      if (total <= budget) return copy;
    }
    return storeWhole(scope, value, text);
  }

  /** A seal is honoured only where Spur put it: never in a value arriving from a node or a client. */
  function refuseForeignRefs(value: unknown, what?: string): void {
    const path = valueRefPath(value, isRef);
    if (path) throw new ForeignValueRefError(path, what);
  }

  async function resolveDeep(value: unknown): Promise<unknown> {
    if (value === null || typeof value !== 'object') return value;
    if (isRef(value)) return JSON.parse((await store.read(value.__spur_value_ref__.id)).toString('utf8')) as unknown;
    if (Array.isArray(value)) return Promise.all(value.map(resolveDeep));
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) out[key] = await resolveDeep(child);
    return out;
  }

  return {
    limits,
    store,

    /**
     * The value as it may travel: large parts stored under `scope` (a run id) and replaced by refs.
     * Throws ValueTooLargeError (naming `what`) when the whole is over `maxBytes`, and
     * ForeignValueRefError when it holds a sealed ref: every value that enters a run comes through
     * here plain (a node's output, a dataset row), so one there was copied from elsewhere.
     * `inlineAtMost` lowers the inline size for this value (a local activity's result).
     */
    async externalize<T>(scope: string, value: T, what?: string, inlineAtMost?: number): Promise<T> {
      refuseForeignRefs(value, what);
      const text = JSON.stringify(value) ?? '';
      const size = Buffer.byteLength(text);
      if (size > limits.maxBytes) throw new ValueTooLargeError(size, limits.maxBytes, what);
      return (await shrink(
        scope,
        value,
        Math.min(limits.refAboveBytes, inlineAtMost ?? limits.refAboveBytes),
        size,
        typeof value === 'string' ? text : undefined,
      )) as T;
    },

    /** The plain value: every ref read back (a value without refs is returned as is). */
    async resolve<T>(value: T): Promise<T> {
      return containsValueRef(value, isRef) ? ((await resolveDeep(value)) as T) : value;
    },

    /** Throws ForeignValueRefError (naming `what`) when a sealed ref sits anywhere inside `value`. */
    refuseForeignRefs,

    /** Whether a sealed ref sits anywhere inside `value`. */
    holdsRefs: (value: unknown): boolean => containsValueRef(value, isRef),

    /** The JSON text of `value` with every sealed ref's stored JSON spliced in, as a stream. */
    jsonStream: (value: unknown) => jsonWithValues(value, store, isRef),

    deleteScopes: (scopes: string[]) => store.deleteScopes(scopes),
  };
}

export type Values = ReturnType<typeof createValues>;

/** The values of one connection's database (bucket `values`), with the configured limits, sealed with the installation's key. */
export function valuesOf(conn: Connection, limits: ValueLimits, secretKey: Buffer): Values {
  if (!conn.db) throw new Error('valuesOf needs an open connection');
  return createValues(createValueStore(conn.db), limits, createValueSeal(secretKey));
}
