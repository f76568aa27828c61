import { MAX_RANGE_ITEMS } from './limits.js';
import { type Args, Callable, LimitError, Namespace, TemplateError, type Value } from './values.js';

/** The names every template sees besides its input: nunjucks' globals and Python's constants. */

function number(value: Value, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new TemplateError(`range() needs numbers for ${what}`);
  return value;
}

/** `range(stop)`, `range(start, stop[, step])`, as nunjucks makes it (a step of 0 counts as 1). */
function range({ positional }: Args): Value {
  const [a, b, c] = positional;
  const [start, stop] = b === undefined ? [0, number(a, 'stop')] : [number(a, 'start'), number(b, 'stop')];
  const step = c === undefined || c === 0 ? 1 : number(c, 'step');
  const count = Math.max(0, Math.ceil((stop - start) / step));
  if (count > MAX_RANGE_ITEMS)
    throw new LimitError(`range() would make ${count} items, more than the limit of ${MAX_RANGE_ITEMS}`);
  return Array.from({ length: count }, (_, i) => start + i * step);
}

/** `cycler(a, b, …)`: `next()` gives the items in turn, `current` the last one given. */
function cycler({ positional: items }: Args): Value {
  let index = -1;
  const current = (): Value => (index === -1 ? null : items[index]);
  const next = new Callable('next', () => {
    index = items.length === 0 ? -1 : (index + 1) % items.length;
    return current();
  });
  const reset = new Callable('reset', () => {
    index = -1;
    return null;
  });
  return new Namespace('cycler', (key) =>
    key === 'next' ? next : key === 'reset' ? reset : key === 'current' ? current() : undefined,
  );
}

/** `joiner(sep)`: a function that gives '' the first time and `sep` after. */
function joiner({ positional: [sep] }: Args): Value {
  let first = true;
  const separator = sep === undefined || sep === null || sep === '' ? ',' : String(sep);
  return new Callable('joiner', () => {
    const out = first ? '' : separator;
    first = false;
    return out;
  });
}

export const GLOBALS: ReadonlyMap<string, Value> = new Map<string, Value>([
  ['range', new Callable('range', range)],
  ['cycler', new Callable('cycler', cycler)],
  ['joiner', new Callable('joiner', joiner)],
]);

/** Python's spellings, for templates written for Jinja (nunjucks reads `true`, `false`, `none`). */
export const CONSTANTS: ReadonlyMap<string, Value> = new Map<string, Value>([
  ['True', true],
  ['False', false],
  ['None', null],
]);
