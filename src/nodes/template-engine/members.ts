import {
  type Args,
  Callable,
  type DataObject,
  Namespace,
  TemplateError,
  type Value,
  isPlainObject,
  ownValue,
} from './values.js';

/**
 * Every attribute and index a template can read (`a.b`, `a["b"]`, `a[0]`) is decided here, by the
 * kind of the value: a dict's own fields and Python's dict methods, a list's elements, a string's
 * characters and a few of Python's string methods, a namespace's members. Nothing else: no
 * prototype, no constructor, no JavaScript method, whatever the key is spelt like.
 */
export function member(obj: Value, key: Value): Value {
  const k = normaliseKey(key);
  if (isPlainObject(obj)) {
    const name = String(k);
    if (Object.hasOwn(obj, name)) return ownValue(obj, name);
    return Object.hasOwn(DICT_METHODS, name) ? DICT_METHODS[name]?.(obj) : undefined;
  }
  if (Array.isArray(obj)) return k === 'length' ? obj.length : element(obj, k);
  if (typeof obj === 'string') {
    if (k === 'length') return obj.length;
    if (typeof k === 'number') return element(obj, k);
    return Object.hasOwn(STRING_METHODS, k) ? STRING_METHODS[k]?.(obj) : undefined;
  }
  if (obj instanceof Namespace && typeof k === 'string') return obj.member(k);
  return undefined;
}

/** A key is a string or a number; anything else (a list, a dict, a function) is refused. */
function normaliseKey(key: Value): string | number {
  if (typeof key === 'string' || typeof key === 'number') return key;
  throw new TemplateError(`an attribute or index must be a string or a number, not ${kindOf(key)}`);
}

export function kindOf(value: Value): string {
  if (value === null) return 'None';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Callable) return 'a function';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** `items[1]`, and from the end with `items[-1]`, as in Python; whole numbers only. */
function element<T>(items: ArrayLike<T>, k: string | number): T | undefined {
  if (typeof k !== 'number' || !Number.isInteger(k)) return undefined;
  const i = k < 0 ? items.length + k : k;
  return i >= 0 && i < items.length ? items[i] : undefined;
}

const method = (label: string, fn: (args: Value[]) => Value) =>
  new Callable(label, (args: Args) => fn(args.positional));

/** Python's dict methods that Jinja templates call on objects. */
const DICT_METHODS: Record<string, (obj: DataObject) => Callable> = {
  items: (obj) => method('items', () => Object.keys(obj).map((k) => [k, ownValue(obj, k)])),
  keys: (obj) => method('keys', () => Object.keys(obj)),
  values: (obj) => method('values', () => Object.keys(obj).map((k) => ownValue(obj, k))),
  get: (obj) =>
    method('get', ([key, fallback = null]) =>
      Object.hasOwn(obj, String(key)) ? ownValue(obj, String(key)) : fallback,
    ),
};

const text = (value: Value): string => (typeof value === 'string' ? value : String(value ?? ''));
const WHITESPACE = ' \t\n\r\v\f';

function stripChars(s: string, chars: Value, left: boolean, right: boolean): string {
  const set = chars === undefined || chars === null ? WHITESPACE : text(chars);
  let start = 0;
  let end = s.length;
  while (left && start < end && set.includes(s.charAt(start))) start++;
  while (right && end > start && set.includes(s.charAt(end - 1))) end--;
  return s.slice(start, end);
}

/** Python's `str.split`: on runs of whitespace without a separator, at most `maxsplit` cuts. */
function split(s: string, sep: Value, maxsplit: Value): string[] {
  const limit = typeof maxsplit === 'number' && maxsplit >= 0 ? maxsplit : Infinity;
  if (sep === undefined || sep === null) {
    const words: string[] = [];
    let rest = s.replace(/^\s+/, '');
    while (rest && words.length < limit) {
      const cut = rest.search(/\s/);
      if (cut === -1) break;
      words.push(rest.slice(0, cut));
      rest = rest.slice(cut).replace(/^\s+/, '');
    }
    return rest ? [...words, rest] : words;
  }
  const separator = text(sep);
  if (separator === '') throw new TemplateError('split(): empty separator');
  const parts = s.split(separator);
  return parts.length - 1 <= limit ? parts : [...parts.slice(0, limit), parts.slice(limit).join(separator)];
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();

/** Python's string methods most templates use; each works on the string it was read from. */
const STRING_METHODS: Record<string, (s: string) => Callable> = {
  upper: (s) => method('upper', () => s.toUpperCase()),
  lower: (s) => method('lower', () => s.toLowerCase()),
  strip: (s) => method('strip', ([chars]) => stripChars(s, chars, true, true)),
  lstrip: (s) => method('lstrip', ([chars]) => stripChars(s, chars, true, false)),
  rstrip: (s) => method('rstrip', ([chars]) => stripChars(s, chars, false, true)),
  split: (s) => method('split', ([sep, maxsplit]) => split(s, sep, maxsplit)),
  startswith: (s) => method('startswith', ([prefix]) => s.startsWith(text(prefix))),
  endswith: (s) => method('endswith', ([suffix]) => s.endsWith(text(suffix))),
  replace: (s) => method('replace', ([old, replacement]) => s.split(text(old)).join(text(replacement))),
  capitalize: (s) => method('capitalize', () => capitalize(s)),
  title: (s) => method('title', () => s.replace(/[A-Za-z]+/g, capitalize)),
};
