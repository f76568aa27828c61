import { runInContext, createContext } from 'node:vm';

/** A pattern match may run this long; a catastrophic pattern is cut off, never the worker's loop. */
export const REGEX_TIME_LIMIT_MS = 100;
/** Text beyond this many characters is not searched (model output is untrusted and may be huge). */
export const REGEX_TEXT_LIMIT = 100_000;

export type BoundedMatch = { ok: true; value: string | null } | { ok: false; reason: string };

// One context for every match: the pattern and text are its only inputs, the script is fixed.
const context = createContext({ pattern: '', flags: '', text: '', found: null as string | null });
const SCRIPT = 'found = null; { const m = new RegExp(pattern, flags).exec(text); if (m) found = m[1] ?? m[0]; }';

/**
 * The first capture group (or the whole match) of `pattern` in `text`, or null. V8 checks for
 * the vm timeout while a regex backtracks, so a pattern like `(a+)+$` is stopped at the limit
 * and reported, instead of holding the worker's event loop.
 */
export function boundedMatch(pattern: string, flags: string, text: string): BoundedMatch {
  Object.assign(context, { pattern, flags, text: text.slice(0, REGEX_TEXT_LIMIT), found: null });
  try {
    runInContext(SCRIPT, context, { timeout: REGEX_TIME_LIMIT_MS });
    return { ok: true, value: (context as { found: string | null }).found };
  } catch (err) {
    const timedOut = (err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
    return {
      ok: false,
      reason: timedOut
        ? `the pattern ran over ${REGEX_TIME_LIMIT_MS} ms and was stopped (catastrophic backtracking?)`
        : `the pattern failed: ${(err as Error).message}`,
    };
  }
}
