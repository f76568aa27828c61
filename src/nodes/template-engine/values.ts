import { pyStr } from '../logic/py-str.js';
import type { AstNode } from './ast.js';

/**
 * What a template computes with: data (JSON-like values, copied into the render thread, so they
 * carry no functions and no prototypes but Object's and Array's) and the engine's own callables.
 * A JavaScript function is never a value: whatever a template calls is a Callable made here.
 */
export type Value = undefined | null | boolean | number | string | Value[] | DataObject | Callable | Namespace;
export interface DataObject {
  [key: string]: Value;
}

/** Named arguments of a call, by name, beside the positional ones. */
export interface Args {
  positional: Value[];
  named: Map<string, Value>;
}

/**
 * Something a template may call: a macro, a global such as `range`, a dict or string method. The
 * function is a private field, so no lookup, filter or serialisation can read it off the object.
 */
export class Callable {
  readonly #label: string;
  readonly #fn: (args: Args) => Value;
  constructor(label: string, fn: (args: Args) => Value) {
    this.#label = label;
    this.#fn = fn;
  }
  invoke(args: Args): Value {
    return this.#fn(args);
  }
  describe(): string {
    return `function ${this.#label}`;
  }
}

/** An object of the engine's with named members (a `cycler`'s `next`, `reset` and `current`). */
export class Namespace {
  readonly #label: string;
  readonly #member: (key: string) => Value;
  constructor(label: string, member: (key: string) => Value) {
    this.#label = label;
    this.#member = member;
  }
  member(key: string): Value {
    return this.#member(key);
  }
  describe(): string {
    return this.#label;
  }
}

/** A template's mistake: a message for the user, placed at the node (1-based line and column). */
export class TemplateError extends Error {
  override name = 'TemplateError';
  constructor(message: string, node?: AstNode) {
    super(node ? `${message} (line ${node.lineno + 1}, column ${node.colno + 1})` : message);
  }
}

/** A render that went over a time, size or range limit. */
export class LimitError extends TemplateError {
  override name = 'LimitError';
}

export function isPlainObject(value: unknown): value is DataObject {
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export const isEngineObject = (value: unknown): value is Callable | Namespace =>
  value instanceof Callable || value instanceof Namespace;

/** An own data property, never an inherited one nor a getter. */
export function ownValue(obj: object, key: string): Value {
  const descriptor = Object.getOwnPropertyDescriptor(obj, key);
  return descriptor && 'value' in descriptor ? (descriptor.value as Value) : undefined;
}

/** Builds a dict without going through `__proto__`'s setter: `{"__proto__": …}` is a key like any other. */
export function dict(entries: Iterable<readonly [string, Value]>): DataObject {
  return Object.fromEntries(entries) as DataObject;
}

/**
 * The operand of one of JavaScript's operators, which nunjucks templates use for `+`, `<`, `~`
 * and the rest. On data they call only Object's and Array's own `valueOf`/`toString`: no data
 * value holds a function, and a Callable has no own properties to convert.
 */
export const operand = (value: Value): number => value as unknown as number;

/** How `{{ value }}` prints: nothing for undefined, Python's `str()` for data. */
export function printValue(value: Value): string {
  if (value === undefined) return '';
  if (isEngineObject(value)) return `<${value.describe()}>`;
  // Values a copied input may hold beyond JSON (a Date): their own built-in string form.
  if (value !== null && typeof value === 'object' && !isPlainObject(value) && !Array.isArray(value))
    return String(value);
  return pyStr(value);
}
