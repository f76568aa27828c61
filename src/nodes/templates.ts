import { NodeExecutionError } from './errors.js';
import { pyStr } from './logic/py-str.js';

/**
 * Jinja-style templates (§8.2) rendered with nunjucks. PySpur renders with Jinja2's default
 * `Undefined`: an unknown name or a missing field prints as "", but reading an attribute OF such an
 * undefined value raises. Nunjucks silently yields "" for both, so each render runs the compiled
 * template against a copy of the nunjucks runtime whose lookups follow Jinja's rules, print values
 * the way Python's `str()` does (`None`, `True`, `{'a': 1}`) and name the undefined path in errors.
 */

// nunjucks ships no type declarations (hence `require`); this is the small part of its API used here.
type Lookup = (obj: unknown, key: unknown) => unknown;
interface NunjucksRuntime {
  memberLookup: Lookup;
  contextOrFrameLookup(context: unknown, frame: unknown, name: string): unknown;
  suppressValue(value: unknown, autoescape: boolean): unknown;
  SafeString: abstract new (value: string) => object;
}
type RootRenderFunc = (env: unknown, context: unknown, frame: unknown, runtime: NunjucksRuntime, cb: unknown) => void;
interface NunjucksTemplate {
  rootRenderFunc: RootRenderFunc;
  render(context: Record<string, unknown>): string;
}
interface NunjucksEnvironment {
  addFilter(name: string, filter: (...args: never[]) => unknown): void;
}
interface Nunjucks {
  Environment: new (loader: null, opts: { autoescape: boolean; throwOnUndefined: boolean }) => NunjucksEnvironment;
  Template: new (src: string, env: NunjucksEnvironment, path: undefined, eagerCompile: boolean) => NunjucksTemplate;
  runtime: NunjucksRuntime;
}
const nunjucks = require('nunjucks') as Nunjucks;

const env = new nunjucks.Environment(null, { autoescape: false, throwOnUndefined: false });
env.addFilter('tojson', (value: unknown, indent?: number) => htmlSafe(pyJsonDumps(value, indent, '')));

/** Thrown inside the compiled template; nunjucks adds the line and column. */
class UndefinedError extends Error {
  override name = 'UndefinedError';
}

/** Methods of Python dicts that templates written for Jinja call on objects. */
const DICT_METHODS: Record<string, (obj: Record<string, unknown>) => (...args: unknown[]) => unknown> = {
  items: (obj) => () => Object.entries(obj),
  keys: (obj) => () => Object.keys(obj),
  values: (obj) => () => Object.values(obj),
  get: (obj) => (key, fallback = null) => (Object.hasOwn(obj, String(key)) ? obj[String(key)] : fallback),
};

const UNSAFE_KEYS = new Set(['constructor', 'prototype', '__proto__']);

const JINJA_CONSTANTS: Record<string, unknown> = { True: true, False: false, None: null };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describeKey(base: string, key: unknown): string {
  return typeof key === 'number' ? `${base}[${key}]` : `${base}.${String(key)}`;
}

/** A runtime for one render: it remembers the path to each looked-up object for error messages. */
function strictRuntime(): NunjucksRuntime {
  const base = nunjucks.runtime;
  const paths = new WeakMap<object, string>();
  let lastUndefined = 'a value';
  const track = (value: unknown, path: string): unknown => {
    if (value === undefined) lastUndefined = `'${path}'`;
    else if (value !== null && typeof value === 'object') paths.set(value, path);
    return value;
  };
  const memberLookup: Lookup = (obj, key) => {
    if (obj === undefined) {
      throw new UndefinedError(`${lastUndefined} is undefined, so it has no attribute '${String(key)}'`);
    }
    // Python's None has no attributes: Jinja makes that an undefined value, not an error.
    if (obj === null) return track(undefined, `None.${String(key)}`);
    const path = describeKey(typeof obj === 'object' ? (paths.get(obj) ?? 'value') : 'value', key);
    if (isPlainObject(obj)) {
      // Own fields only, so `constructor` or `toString` read as missing fields, as in Jinja.
      if (Object.hasOwn(obj, String(key))) return track(obj[String(key)], path);
      const method = Object.hasOwn(DICT_METHODS, String(key)) ? DICT_METHODS[String(key)] : undefined;
      return method ? method(obj) : track(undefined, path);
    }
    // `range.constructor("…")()` would reach Function, i.e. arbitrary code; templates get data only.
    if (typeof key === 'string' && UNSAFE_KEYS.has(key)) return track(undefined, path);
    if (Array.isArray(obj) && typeof key === 'number' && key < 0) return track(obj[obj.length + key], path);
    return track(base.memberLookup(obj, key), path);
  };
  return {
    ...base,
    memberLookup,
    contextOrFrameLookup: (context, frame, name) => {
      const value = base.contextOrFrameLookup(context, frame, name);
      if (value === undefined && Object.hasOwn(JINJA_CONSTANTS, name)) return JINJA_CONSTANTS[name];
      return track(value, name);
    },
    suppressValue: (value) => {
      if (value === undefined) return '';
      // SafeString and other runtime objects print through their own toString; data as Python would.
      if (value !== null && typeof value === 'object' && !isPlainObject(value) && !Array.isArray(value)) return String(value);
      return pyStr(value);
    },
  };
}

/**
 * Renders `template` over `context` with Jinja semantics. Syntax errors and reads through undefined
 * values throw NodeExecutionError; `name` (e.g. the config field) prefixes the message.
 */
export function renderTemplate(template: string, context: Record<string, unknown>, name = 'template'): string {
  try {
    const compiled = new nunjucks.Template(template, env, undefined, true);
    const root = compiled.rootRenderFunc;
    const runtime = strictRuntime();
    compiled.rootRenderFunc = (e, ctx, frame, _runtime, cb) => root(e, ctx, frame, runtime, cb);
    return compiled.render(context);
  } catch (err) {
    throw new NodeExecutionError(`Error rendering ${name}: ${templateMessage(err)}`, { cause: err });
  }
}

/** nunjucks messages read "(unknown path) [Line 1, Column 5]\n  Error: …"; keep the useful parts. */
function templateMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text
    .replace(/^\(unknown path\)\s*/, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

/** Python's `json.dumps(value, sort_keys=True, indent=indent)` with its default ASCII escaping. */
function pyJsonDumps(value: unknown, indent: number | undefined, pad: string): string {
  const inner = indent === undefined ? '' : `${pad}${' '.repeat(indent)}`;
  const join = (items: string[], open: string, close: string) => {
    if (items.length === 0) return `${open}${close}`;
    if (indent === undefined) return `${open}${items.join(', ')}${close}`;
    return `${open}\n${inner}${items.join(`,\n${inner}`)}\n${pad}${close}`;
  };
  if (Array.isArray(value)) return join(value.map((v) => pyJsonDumps(v, indent, inner)), '[', ']');
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    const record = value as Record<string, unknown>;
    const items = keys.filter((k) => record[k] !== undefined).map((k) => `${asciiJson(k)}: ${pyJsonDumps(record[k], indent, inner)}`);
    return join(items, '{', '}');
  }
  if (value === undefined) return 'null';
  return asciiJson(value);
}

function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Jinja's `tojson` escapes the HTML-significant characters so the output is safe in markup. */
function htmlSafe(json: string): string {
  return json.replace(/[<>&']/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
