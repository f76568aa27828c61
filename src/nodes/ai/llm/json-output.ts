import { Ajv, type ValidateFunction } from 'ajv';
import { NodeExecutionError } from '../../errors.js';
import { type LimitedValidation, trackedRegExp, validateWithinLimit } from './schema-patterns.js';

/** A compiled `output_json_schema`: the schema object (sent to providers) and its validator. */
export interface OutputSchema {
  schema: Record<string, unknown>;
  validate: ValidateFunction;
  /** True for `{output: string}` (the default): a reply that is not JSON becomes `{output: text}`. */
  plainTextOutput: boolean;
  /** Whether a validation can take more than time linear in the reply (validateOutput bounds only those). */
  mayRunLong: boolean;
}

// Not strict: user-written schemas carry keywords ajv does not know (`title`, vendor extensions).
// Patterns run on model output: a validation that can run long is bounded in time (schema-patterns.ts).
const ajv = new Ajv({ allErrors: true, strict: false, code: { regExp: trackedRegExp } });
const cache = new Map<string, OutputSchema>();
/** Schema texts are per node config, so a small cache holds every schema a worker sees in practice. */
const MAX_CACHED = 256;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Keywords that let one validation outgrow the reply: a pattern can backtrack (`format`s are
 * patterns too), `uniqueItems` compares every pair, and a reference can recurse, where each
 * `anyOf` branch re-walks the rest of the reply. Without them the work is the schema's size times
 * the reply's, and the schema is the caller's, of bounded size.
 */
const MAY_RUN_LONG = new Set([
  'pattern',
  'patternProperties',
  'format',
  'uniqueItems',
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
]);

/** Whether any key anywhere in the schema is one of those (a property of that name counts too: harmless). */
function mayRunLong(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(mayRunLong);
  if (!isObject(value)) return false;
  return Object.entries(value).some(([key, inner]) => MAY_RUN_LONG.has(key) || mayRunLong(inner));
}

function isPlainTextOutput(schema: Record<string, unknown>): boolean {
  const properties = schema.properties;
  if (!isObject(properties)) return false;
  const keys = Object.keys(properties);
  return (
    keys.length === 1 && keys[0] === 'output' && isObject(properties.output) && properties.output.type === 'string'
  );
}

/** Parses and compiles an `output_json_schema` text, once per distinct text. */
export function outputSchemaFor(text: string): OutputSchema {
  const cached = cache.get(text);
  if (cached) return cached;
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw new NodeExecutionError(`output_json_schema is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (!isObject(schema)) throw new NodeExecutionError('output_json_schema must be a JSON object');
  // `$schema` may name a draft ajv does not bundle and `$id` clashes across cached schemas; the
  // validation keywords are what matter here.
  const { $schema: _draft, $id: _id, ...keywords } = schema;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(keywords);
  } catch (err) {
    throw new NodeExecutionError(`output_json_schema is not a valid JSON Schema: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (cache.size >= MAX_CACHED) {
    const [oldest] = cache;
    if (oldest) {
      cache.delete(oldest[0]);
      ajv.removeSchema(oldest[1].schema);
    }
  }
  const compiled: OutputSchema = {
    schema: keywords,
    validate,
    plainTextOutput: isPlainTextOutput(keywords),
    mayRunLong: mayRunLong(keywords),
  };
  cache.set(text, compiled);
  return compiled;
}

/** The JSON value in a reply: the whole text, a ```json fenced block, or the outermost {…}. */
export function parseJsonReply(text: string): { ok: true; value: unknown } | { ok: false } {
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(text)?.[1];
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  const candidates = [text.trim(), fenced?.trim(), start >= 0 && end > start ? text.slice(start, end + 1) : undefined];
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      return { ok: true, value: JSON.parse(candidate) as unknown };
    } catch {
      // try the next way of finding the JSON
    }
  }
  return { ok: false };
}

function preview(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** The node output for a model reply: parsed, wrapped if plain text is allowed, then validated. */
export function replyToOutput(text: string, output: OutputSchema): Record<string, unknown> {
  const parsed = parseJsonReply(text);
  let value: unknown = parsed.ok ? parsed.value : undefined;
  if (!isObject(value) && output.plainTextOutput) {
    value = { output: typeof value === 'string' ? value : text };
  }
  if (!isObject(value)) {
    throw new NodeExecutionError(`The model's reply is not a JSON object: ${preview(text)}`);
  }
  return validatedOutput(value, output);
}

/**
 * Validates `value` against a compiled schema: one that can run long is bounded in time (a stopped
 * pattern is named); the rest, the default `{output: string}` among them, validate in line, sparing
 * every reply the bound's watchdog thread.
 */
export function validateOutput(value: unknown, output: OutputSchema): LimitedValidation {
  if (output.mayRunLong) return validateWithinLimit(output.validate, value);
  return { ok: true, valid: output.validate(value) === true };
}

/** The value, if it matches the schema; else the node fails saying how it does not. */
export function validatedOutput(value: Record<string, unknown>, output: OutputSchema): Record<string, unknown> {
  const checked = validateOutput(value, output);
  if (!checked.ok)
    throw new NodeExecutionError(
      `output_json_schema could not be checked against the model's reply: ${checked.reason}`,
    );
  if (!checked.valid) {
    const problems = ajv.errorsText(output.validate.errors, { dataVar: 'output' });
    throw new NodeExecutionError(`The model's reply does not match output_json_schema: ${problems}`);
  }
  return value;
}
