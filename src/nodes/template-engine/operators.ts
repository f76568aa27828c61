import type { AstNode } from './ast.js';
import { keyText } from './names.js';
import { TemplateError, type Value, isPlainObject, operand, printValue } from './values.js';

/**
 * What a template's operators do to data. nunjucks compiles them to JavaScript's own operators,
 * and templates written for it rely on that (`'a' + 1`, `[1] == '1'`), so these are JavaScript's
 * operators on the operands, never a method of the values.
 */

const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  '==': (a, b) => a == b,
  '===': (a, b) => a === b,
  '!=': (a, b) => a != b,
  '!==': (a, b) => a !== b,
  '<': (a, b) => a < b,
  '>': (a, b) => a > b,
  '<=': (a, b) => a <= b,
  '>=': (a, b) => a >= b,
};

/** One link of a comparison chain (`a < b` in `a < b < c`). */
export function compareOnce(op: string, left: Value, right: Value, node: AstNode): boolean {
  const compare = COMPARE[op];
  if (!compare) throw new TemplateError(`unknown comparison '${op}'`, node);
  return compare(operand(left), operand(right));
}

const ARITHMETIC: Record<string, (a: number, b: number) => Value> = {
  Add: (a, b) => a + b,
  Concat: (a, b) => a + '' + b,
  Sub: (a, b) => a - b,
  Mul: (a, b) => a * b,
  Div: (a, b) => a / b,
  FloorDiv: (a, b) => Math.floor(a / b),
  Mod: (a, b) => a % b,
  Pow: (a, b) => Math.pow(a, b),
};

/** `left op right` for the arithmetic node types (the parser makes no others). */
export function arithmetic(op: string, left: Value, right: Value): Value {
  const [a, b] = [operand(left), operand(right)];
  return (ARITHMETIC[op] as (a: number, b: number) => Value)(a, b);
}

/** `needle in haystack`: a list's element, a substring, or a dict's own key. */
export function contains(haystack: Value, needle: Value, node: AstNode): boolean {
  if (Array.isArray(haystack)) return haystack.includes(needle);
  if (typeof haystack === 'string') return haystack.includes(String(needle));
  if (isPlainObject(haystack)) return Object.hasOwn(haystack, String(needle));
  throw new TemplateError(
    `cannot use 'in' to search for '${keyText(needle)}' in ${printValue(haystack) || 'an undefined value'}`,
    node,
  );
}
