import { kindOf, member } from './members.js';
import { tojson } from './tojson.js';
import { type Args, TemplateError, type Value, isEngineObject, operand, printValue } from './values.js';

/**
 * The filters a template may use (`{{ x | upper }}`): nunjucks' built-in filters and Jinja's
 * `tojson`. nunjucks' own implementations are called where they only read the data they are given;
 * the ones that follow an attribute name (`sort(attribute=…)`, `groupby`, `selectattr`, `sum`,
 * `join`) are written here so that the attribute is read through `member`, like `a.b`.
 */

type Fn = (...args: Value[]) => Value;
interface Filter {
  /** Parameter names after the value, for keyword arguments (`truncate(length=10)`). */
  params: string[];
  run: Fn;
}

// nunjucks ships no type declarations (hence `require`).
const library = require('nunjucks/src/filters') as Record<string, (...args: unknown[]) => unknown>;
const libraryTests = require('nunjucks/src/tests') as Record<string, (...args: unknown[]) => unknown>;
const { SafeString } = require('nunjucks/src/runtime') as { SafeString: abstract new (...args: never[]) => object };

/** A nunjucks filter over data: engine objects are refused, and its SafeString results are plain strings. */
function fromLibrary(name: string, params: string[]): Filter {
  const fn = library[name];
  if (!fn) throw new Error(`nunjucks has no filter ${name}`);
  return {
    params,
    run: (...args) => {
      if (args.some(isEngineObject)) throw new TemplateError(`the ${name} filter takes data, not a function`);
      const result = fn(...args);
      if (result instanceof SafeString) return String(result);
      if (typeof result === 'function') throw new TemplateError(`the ${name} filter gave a function`);
      return result as Value;
    },
  };
}

/** `item.a.b` for an attribute argument, read the way the template would read it. */
function attribute(item: Value, path: Value): Value {
  let value = item;
  for (const part of String(path).split('.')) {
    if (value === undefined || value === null) return undefined;
    value = member(value, /^-?\d+$/.test(part) ? Number(part) : part);
  }
  return value;
}

function list(value: Value, filter: string): Value[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return [...value];
  throw new TemplateError(`the ${filter} filter needs a list, not ${kindOf(value)}`);
}

/** The `is` tests (`x is defined`, `n is divisibleby(3)`), also used by select/reject. */
export function runTest(name: string, value: Value, args: Value[]): boolean {
  if (name === 'callable') return isEngineObject(value);
  const test = Object.hasOwn(libraryTests, name) ? libraryTests[name] : undefined;
  if (!test) throw new TemplateError(`there is no test named '${name}'`);
  if (isEngineObject(value) || args.some(isEngineObject)) return name === 'defined' || name === 'truthy';
  return test(value, ...args) === true;
}

function selectBy(expected: boolean, byAttribute: boolean): Fn {
  return (value, ...rest) => {
    const [attr, testName, ...testArgs] = byAttribute ? rest : [undefined, ...rest];
    const name = testName === undefined || testName === null ? 'truthy' : String(testName);
    return list(value, byAttribute ? 'selectattr' : 'select').filter(
      (item) => runTest(name, byAttribute ? attribute(item, attr) : item, testArgs) === expected,
    );
  };
}

function sort(value: Value, reverse: Value, caseSensitive: Value, attr: Value): Value {
  const key = (item: Value): Value => {
    const v = attr === undefined || attr === null ? item : attribute(item, attr);
    return !caseSensitive && typeof v === 'string' ? v.toLowerCase() : v;
  };
  const sign = reverse ? -1 : 1;
  return [...list(value, 'sort')].sort((a, b) => {
    const x = operand(key(a));
    const y = operand(key(b));
    return x < y ? -sign : x > y ? sign : 0;
  });
}

function groupby(value: Value, attr: Value): Value {
  const groups = new Map<string, Value[]>();
  for (const item of list(value, 'groupby')) {
    const key = String(attribute(item, attr));
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  return Object.fromEntries(groups);
}

function join(value: Value, separator: Value, attr: Value): Value {
  const items = list(value, 'join').map((item) => (attr === undefined || attr === null ? item : attribute(item, attr)));
  // As nunjucks joins (JavaScript's Array#join): None and undefined are empty, the rest `String()`.
  return items
    .map((item) => (item === undefined || item === null ? '' : String(item)))
    .join(separator === undefined || separator === null ? '' : String(separator));
}

function sum(value: Value, attr: Value, start: Value = 0): Value {
  const items = list(value, 'sum').map((item) => (attr === undefined || attr === null ? item : attribute(item, attr)));
  return items.reduce<number>((total, item) => total + operand(item), operand(start));
}

const own = (params: string[], run: Fn): Filter => ({ params, run });

const FILTERS = new Map<string, Filter>([
  ['abs', fromLibrary('abs', [])],
  ['batch', fromLibrary('batch', ['linecount', 'fill_with'])],
  ['capitalize', fromLibrary('capitalize', [])],
  ['center', fromLibrary('center', ['width'])],
  [
    'default',
    own(['default_value', 'boolean'], (v, fallback, boolean) =>
      boolean ? v || fallback : v !== undefined ? v : fallback,
    ),
  ],
  ['dictsort', fromLibrary('dictsort', ['case_sensitive', 'by'])],
  ['dump', fromLibrary('dump', ['spaces'])],
  ['escape', fromLibrary('escape', [])],
  ['first', fromLibrary('first', [])],
  ['float', fromLibrary('float', ['default'])],
  ['forceescape', fromLibrary('forceescape', [])],
  ['groupby', own(['attribute'], groupby)],
  ['indent', fromLibrary('indent', ['width', 'first'])],
  ['int', fromLibrary('int', ['default', 'base'])],
  ['join', own(['d', 'attribute'], join)],
  ['last', fromLibrary('last', [])],
  ['length', fromLibrary('length', [])],
  ['list', fromLibrary('list', [])],
  ['lower', fromLibrary('lower', [])],
  ['nl2br', fromLibrary('nl2br', [])],
  ['random', fromLibrary('random', [])],
  ['reject', own(['test', 'arg'], selectBy(false, false))],
  ['rejectattr', own(['attribute', 'test', 'arg'], selectBy(false, true))],
  ['replace', fromLibrary('replace', ['old', 'new', 'count'])],
  ['reverse', fromLibrary('reverse', [])],
  ['round', fromLibrary('round', ['precision', 'method'])],
  ['safe', own([], (v) => (v === undefined || v === null ? '' : printValue(v)))],
  ['select', own(['test', 'arg'], selectBy(true, false))],
  ['selectattr', own(['attribute', 'test', 'arg'], selectBy(true, true))],
  ['slice', fromLibrary('slice', ['slices', 'fill_with'])],
  ['sort', own(['reverse', 'case_sensitive', 'attribute'], sort)],
  ['string', own([], printValue)],
  ['striptags', fromLibrary('striptags', ['preserve_linebreaks'])],
  ['sum', own(['attribute', 'start'], sum)],
  ['title', fromLibrary('title', [])],
  ['tojson', own(['indent'], (v, indent) => tojson(v, typeof indent === 'number' ? indent : undefined))],
  ['trim', fromLibrary('trim', [])],
  ['truncate', fromLibrary('truncate', ['length', 'killwords', 'end'])],
  ['upper', fromLibrary('upper', [])],
  ['urlencode', fromLibrary('urlencode', [])],
  ['urlize', fromLibrary('urlize', ['trim_url_limit', 'nofollow'])],
  ['wordcount', fromLibrary('wordcount', [])],
]);
FILTERS.set('d', FILTERS.get('default') as Filter);
FILTERS.set('e', FILTERS.get('escape') as Filter);

/** Applies filter `name` to `value`; keyword arguments fill the parameters they name. */
export function applyFilter(name: string, value: Value, args: Args): Value {
  const filter = FILTERS.get(name);
  if (!filter) throw new TemplateError(`there is no filter named '${name}'`);
  const positional = [...args.positional];
  for (const [key, arg] of args.named) {
    const at = filter.params.indexOf(key);
    if (at === -1) throw new TemplateError(`the ${name} filter has no parameter '${key}'`);
    positional[at] = arg;
  }
  while (positional.length && positional[positional.length - 1] === undefined) positional.pop();
  return filter.run(value, ...positional);
}
