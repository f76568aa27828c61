import { NodeExecutionError } from './errors.js';

/**
 * Coerces a node's output object to its `output_schema` (field → type name), the way
 * PySpur validates outputs against a pydantic model built from that schema in lax mode: only
 * the schema's fields are kept (extra keys dropped), each is required, and values convert where
 * the conversion is unambiguous (`"5"` → 5 for an integer). An empty or absent schema keeps the
 * output as it is. Unknown type names (`List[Dict[str, str]]`, …) accept any value.
 */
export function coerceToOutputSchema(
  output: Record<string, unknown>,
  outputSchema: Record<string, string> | undefined,
): Record<string, unknown> {
  if (!outputSchema || Object.keys(outputSchema).length === 0) return { ...output };
  const result: Record<string, unknown> = {};
  for (const [field, typeName] of Object.entries(outputSchema)) {
    if (!Object.hasOwn(output, field) || output[field] === undefined) {
      throw new NodeExecutionError(`Output field '${field}' is missing (expected ${typeName})`);
    }
    const coerce = COERCERS.get(typeName.trim().toLowerCase());
    if (!coerce) {
      result[field] = output[field];
      continue;
    }
    const value = coerce(output[field]);
    if (value === INVALID) {
      throw new NodeExecutionError(`Output field '${field}' should be ${typeName}, got ${describe(output[field])}`);
    }
    result[field] = value;
  }
  return result;
}

const INVALID = Symbol('invalid');
type Coercer = (value: unknown) => unknown;

/** Pydantic's lax spellings of booleans in strings. */
const TRUE_WORDS = new Set(['true', '1', 'yes', 'y', 'on', 't']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'n', 'off', 'f']);

/** Decimal text as Python's float() reads it; Number() alone would also take "0x10" and "". */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
/** Integer text as pydantic reads it: digits, optionally with a zero fraction ("5.0"). */
const INTEGER = /^[+-]?\d+(\.0*)?$/;

function toNumber(value: unknown): number | typeof INVALID {
  if (typeof value === 'number') return Number.isFinite(value) ? value : INVALID;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && DECIMAL.test(value.trim())) {
    const n = Number(value.trim());
    return Number.isFinite(n) ? n : INVALID;
  }
  return INVALID;
}

function toInteger(value: unknown): number | typeof INVALID {
  if (typeof value === 'string' && !INTEGER.test(value.trim())) return INVALID;
  const n = toNumber(value);
  // A fractional part is an error, not something to round away (5.5 fails, 5.0 → 5).
  return n !== INVALID && Number.isInteger(n) ? n : INVALID;
}

function toText(value: unknown): string | typeof INVALID {
  if (typeof value === 'string') return value;
  // Friendlier than pydantic (which rejects 5 for str): scalars have one obvious text form.
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  return INVALID;
}

function toBoolean(value: unknown): boolean | typeof INVALID {
  if (typeof value === 'boolean') return value;
  if (value === 0 || value === 1) return value === 1;
  if (typeof value === 'string') {
    const word = value.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
  }
  return INVALID;
}

const toList: Coercer = (value) => (Array.isArray(value) ? value : INVALID);
const toObject: Coercer = (value) =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? value : INVALID;

const COERCERS = new Map<string, Coercer>([
  ['string', toText],
  ['str', toText],
  ['integer', toInteger],
  ['int', toInteger],
  ['number', toNumber],
  ['float', toNumber],
  ['boolean', toBoolean],
  ['bool', toBoolean],
  ['list', toList],
  ['array', toList],
  ['dict', toObject],
  ['object', toObject],
]);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
