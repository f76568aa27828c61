import type { CodeOptions, ValidateFunction } from 'ajv';
import { boundedCall } from '../../bounded-regex.js';

/**
 * One validation of model output against an `output_json_schema` (or a `json_schema` scorer's
 * schema) may run this long: the data is untrusted, the patterns the caller's, and a catastrophic
 * pair (`^(a+)+$` on 30 characters) once held the whole process, heartbeats and all, for half a
 * minute. Validating a large reply takes a few milliseconds, so the bound is generous.
 */
export const SCHEMA_VALIDATION_LIMIT_MS = 250;

type RegExpEngine = NonNullable<CodeOptions['regExp']>;
type RegExpLike = ReturnType<RegExpEngine>;

/** The schema pattern being tested now, so a validation stopped at its limit names it. */
let running: string | null = null;

function trackedRegExpOf(pattern: string, flags: string): RegExpLike {
  const regex = new RegExp(pattern, flags);
  const tracked: RegExpLike & { toString(): string } = {
    test(text: string): boolean {
      running = pattern;
      const found = regex.test(text);
      running = null;
      return found;
    },
    // ajv keys compiled patterns by this text: each pattern keeps its own.
    toString: () => regex.toString(),
  };
  return tracked;
}

/** ajv's regex engine: V8's, each test noting its pattern (validateWithinLimit bounds the time). */
export const trackedRegExp: RegExpEngine = Object.assign(trackedRegExpOf, {
  // Only ajv's standalone code generation reads this; Spur compiles schemas in process.
  code: 'trackedRegExp',
});

/** A stopped validation's reason names the pattern it was running, if any. */
export type LimitedValidation = { ok: true; valid: boolean } | { ok: false; pattern: string | null; reason: string };

/** Validates `value` with a validator compiled on `trackedRegExp`, stopped at SCHEMA_VALIDATION_LIMIT_MS. */
export function validateWithinLimit(validate: ValidateFunction, value: unknown): LimitedValidation {
  running = null;
  const run = boundedCall(() => validate(value) === true, SCHEMA_VALIDATION_LIMIT_MS);
  const pattern = running;
  running = null;
  if (run.ok) return { ok: true, valid: run.value };
  const what = pattern === null ? 'the validation' : `the pattern ${JSON.stringify(pattern)}`;
  return {
    ok: false,
    pattern,
    reason: `${what} ran over ${SCHEMA_VALIDATION_LIMIT_MS} ms and was stopped${pattern === null ? '' : ' (catastrophic backtracking?)'}`,
  };
}
