import type { z } from 'zod';
import type { ValidationDetail } from '../errors';

export type RequestPart = 'path' | 'query' | 'body' | 'header';

/**
 * Translates zod issues into FastAPI/pydantic v2 error items, so PySpur clients that read
 * `detail[].type`/`loc`/`msg` keep working. `raw` is the unparsed request part: `input` is read
 * from it, because zod reports coerced values.
 */
export function toValidationDetails(
  issues: readonly z.core.$ZodIssue[],
  part: RequestPart,
  raw: unknown,
): ValidationDetail[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys' ? extraKeys(issue, part, raw) : [toDetail(issue, part, raw)],
  );
}

/** One item per unknown key, its loc naming it, as pydantic's `extra="forbid"` answers. */
function extraKeys(issue: z.core.$ZodIssueUnrecognizedKeys, part: RequestPart, raw: unknown): ValidationDetail[] {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  return issue.keys.map((key) => ({
    type: 'extra_forbidden',
    loc: [part, ...path, key],
    msg: 'Extra inputs are not permitted',
    input: valueAt(raw, [...path, key]) ?? null,
  }));
}

function toDetail(issue: z.core.$ZodIssue, part: RequestPart, raw: unknown): ValidationDetail {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  const loc = [part, ...path];
  const value = valueAt(raw, path);
  if (value === undefined && issue.code === 'invalid_type') {
    return {
      type: 'missing',
      loc,
      msg: 'Field required',
      input: path.length ? (valueAt(raw, path.slice(0, -1)) ?? null) : null,
    };
  }
  const input = value === undefined ? null : value;
  switch (issue.code) {
    case 'invalid_type':
      return { ...typeError(issue.expected, part), loc, input };
    case 'too_small':
      return { ...boundError(issue.origin, 'ge', issue.minimum, issue.inclusive !== false), loc, input };
    case 'too_big':
      return { ...boundError(issue.origin, 'le', issue.maximum, issue.inclusive !== false), loc, input };
    case 'invalid_value': {
      const expected = formatChoices(issue.values.map(String));
      return { type: 'enum', loc, msg: `Input should be ${expected}`, input, ctx: { expected } };
    }
    case 'custom': {
      const kind = (issue.params as { pydanticType?: string } | undefined)?.pydanticType;
      if (kind === 'assertion_error') return { type: kind, loc, msg: `Assertion failed, ${issue.message}`, input };
      return { type: 'value_error', loc, msg: `Value error, ${issue.message}`, input, ctx: { error: {} } };
    }
    default:
      return { type: 'value_error', loc, msg: issue.message, input };
  }
}

const TYPE_MESSAGES: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  number: ['float_type', 'Input should be a valid number'],
  int: ['int_type', 'Input should be a valid integer'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  object: ['dict_type', 'Input should be a valid dictionary'],
  record: ['dict_type', 'Input should be a valid dictionary'],
  array: ['list_type', 'Input should be a valid list'],
  date: ['datetime_type', 'Input should be a valid datetime'],
};

function typeError(expected: string, part: RequestPart): { type: string; msg: string } {
  // Query and path values arrive as text: a failed number conversion is a parsing error there.
  if (part !== 'body' && (expected === 'number' || expected === 'int')) {
    return { type: 'int_parsing', msg: 'Input should be a valid integer, unable to parse string as an integer' };
  }
  if (part !== 'body' && expected === 'boolean') {
    return { type: 'bool_parsing', msg: 'Input should be a valid boolean, unable to interpret input' };
  }
  const [type, msg] = TYPE_MESSAGES[expected] ?? ['type_error', `Input should be a valid ${expected}`];
  return { type, msg };
}

function boundError(origin: string, bound: 'ge' | 'le', limit: unknown, inclusive: boolean) {
  const n = typeof limit === 'bigint' ? Number(limit) : (limit as number);
  if (origin === 'string') {
    return bound === 'ge'
      ? {
          type: 'string_too_short',
          msg: `String should have at least ${n} character${n === 1 ? '' : 's'}`,
          ctx: { min_length: n },
        }
      : {
          type: 'string_too_long',
          msg: `String should have at most ${n} character${n === 1 ? '' : 's'}`,
          ctx: { max_length: n },
        };
  }
  if (origin === 'array' || origin === 'set') {
    return bound === 'ge'
      ? { type: 'too_short', msg: `List should have at least ${n} item${n === 1 ? '' : 's'}`, ctx: { min_length: n } }
      : { type: 'too_long', msg: `List should have at most ${n} item${n === 1 ? '' : 's'}`, ctx: { max_length: n } };
  }
  const key = inclusive ? bound : bound === 'ge' ? 'gt' : 'lt';
  const words = { ge: 'greater than or equal to', le: 'less than or equal to', gt: 'greater than', lt: 'less than' }[
    key
  ];
  const type = { ge: 'greater_than_equal', le: 'less_than_equal', gt: 'greater_than', lt: 'less_than' }[key];
  return { type, msg: `Input should be ${words} ${n}`, ctx: { [key]: n } };
}

function formatChoices(values: string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  return quoted.length <= 1 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`;
}

function valueAt(root: unknown, path: (string | number)[]): unknown {
  let cur = root;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}
