import { valueAtPath } from '../paths.js';
import type { NodeInput } from '../types.js';
import { pyFloat } from './py-float.js';
import { pyStr } from './py-str.js';
import { isTruthy } from './py-truthy.js';

/** One router condition as the config carries it. */
export interface RouteCondition {
  variable: string;
  operator: string;
  value?: unknown;
  logicalOperator?: string | null;
}

/**
 * A route's conditions combined left to right, without precedence: `A OR B AND C` is
 * `(A OR B) AND C`. The first condition's `logicalOperator` is ignored; `OR` means or, anything
 * else means and. No conditions → the route matches.
 */
export function routeMatches(conditions: readonly RouteCondition[], input: NodeInput): boolean {
  const [first, ...rest] = conditions;
  if (first === undefined) return true;
  let result = conditionHolds(first, input);
  for (const condition of rest) {
    const holds = conditionHolds(condition, input);
    result = condition.logicalOperator === 'OR' ? result || holds : result && holds;
  }
  return result;
}

/**
 * One condition, as PySpur evaluates it: an empty `variable` → false; a missing or null value →
 * true only for `is_empty`; string operators compare Python `str()` forms; number operators
 * compare Python `float()` values (a value that does not convert → false; NaN never compares true).
 */
export function conditionHolds(condition: RouteCondition, input: NodeInput): boolean {
  if (condition.variable === '') return false;
  const { found, value } = valueAtPath(input, condition.variable);
  if (!found || value === null || value === undefined) return condition.operator === 'is_empty';
  const expected = condition.value;
  switch (condition.operator) {
    case 'contains':
      return pyStr(value).includes(pyStr(expected));
    case 'equals':
      return pyStr(value) === pyStr(expected);
    case 'starts_with':
      return pyStr(value).startsWith(pyStr(expected));
    case 'not_starts_with':
      return !pyStr(value).startsWith(pyStr(expected));
    case 'number_equals':
      return compareFloats(value, expected, (a, b) => a === b);
    case 'greater_than':
      return compareFloats(value, expected, (a, b) => a > b);
    case 'less_than':
      return compareFloats(value, expected, (a, b) => a < b);
    case 'is_empty':
      return !isTruthy(value);
    case 'is_not_empty':
      return isTruthy(value);
    default:
      return false;
  }
}

function compareFloats(actual: unknown, expected: unknown, compare: (a: number, b: number) => boolean): boolean {
  const a = pyFloat(actual);
  const b = pyFloat(expected);
  return a !== undefined && b !== undefined && compare(a, b);
}
