import { Script, createContext } from 'node:vm';

/** A pattern match may run this long; a catastrophic pattern is cut off, never the worker's loop. */
export const REGEX_TIME_LIMIT_MS = 100;
/** Text beyond this many characters is not searched (model output is untrusted and may be huge). */
export const REGEX_TEXT_LIMIT = 100_000;

export type BoundedMatch = { ok: true; value: string | null } | { ok: false; reason: string };
/** What `run()` returned, or that it was stopped at the limit (any error it throws is thrown on). */
export type BoundedCall<T> = { ok: true; value: T } | { ok: false };

// One context for every call: the function is its only input, the script is fixed.
const context = createContext({ run: (): unknown => undefined, result: undefined as unknown });
const SCRIPT = new Script('result = run()');

/**
 * `run()`, stopped once it has taken `timeoutMs`. The vm timeout stops whatever JavaScript runs
 * meanwhile, and V8 checks for it while a regex backtracks, so a pattern like `(a+)+$` on model
 * output is stopped at the limit and reported, instead of holding the event loop (and with it a
 * worker's heartbeats, or the api hosting it). The limit is wall time: a call stopped having used
 * under half of it in CPU was starved (a loaded host), not working, and runs once more.
 */
export function boundedCall<T>(run: () => T, timeoutMs: number): BoundedCall<T> {
  const before = process.cpuUsage();
  const first = boundedOnce(run, timeoutMs);
  if (first.ok || !wasStarved(process.cpuUsage(before), timeoutMs)) return first;
  return boundedOnce(run, timeoutMs);
}

/** Whether a stopped call used less than half its time limit in CPU (the process's, in µs). */
export function wasStarved(used: { user: number; system: number }, timeoutMs: number): boolean {
  return used.user + used.system < (timeoutMs * 1000) / 2;
}

function boundedOnce<T>(run: () => T, timeoutMs: number): BoundedCall<T> {
  Object.assign(context, { run, result: undefined });
  try {
    SCRIPT.runInContext(context, { timeout: timeoutMs });
    return { ok: true, value: (context as { result: T }).result };
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return { ok: false };
    throw err;
  } finally {
    // The context outlives the call: it keeps nothing of it (model output may be large).
    Object.assign(context, { run: () => undefined, result: undefined });
  }
}

/**
 * The first capture group (or the whole match) of `pattern` in `text`, or null, within
 * REGEX_TIME_LIMIT_MS and over the first REGEX_TEXT_LIMIT characters.
 */
export function boundedMatch(pattern: string, flags: string, text: string): BoundedMatch {
  const searched = text.slice(0, REGEX_TEXT_LIMIT);
  let run: BoundedCall<string | null>;
  try {
    run = boundedCall(() => {
      const m = new RegExp(pattern, flags).exec(searched);
      return m ? (m[1] ?? m[0]) : null;
    }, REGEX_TIME_LIMIT_MS);
  } catch (err) {
    return { ok: false, reason: `the pattern failed: ${(err as Error).message}` };
  }
  return run.ok
    ? run
    : {
        ok: false,
        reason: `the pattern ran over ${REGEX_TIME_LIMIT_MS} ms and was stopped (catastrophic backtracking?)`,
      };
}
