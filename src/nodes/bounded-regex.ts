import { existsSync, readFileSync } from 'node:fs';
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

/** Tries of a call whose every stop was starvation; a call that works through its limit gets one. */
export const BOUNDED_CALL_TRIES = 4;

/**
 * `run()`, stopped once it has taken `timeoutMs`. The vm timeout stops whatever JavaScript runs
 * meanwhile, and V8 checks for it while a regex backtracks, so a pattern like `(a+)+$` on model
 * output is stopped at the limit and reported, instead of holding the event loop (and with it a
 * worker's heartbeats, or the api hosting it). The limit is wall time: a call stopped having used
 * under half of it in CPU (this thread's) was starved (a loaded host), not working, and runs again —
 * up to BOUNDED_CALL_TRIES in all, since a host loaded enough to starve one try may starve the next.
 */
export function boundedCall<T>(run: () => T, timeoutMs: number): BoundedCall<T> {
  for (let tries = 1; ; tries++) {
    const before = threadCpuMicros();
    const once = boundedOnce(run, timeoutMs);
    if (once.ok || tries === BOUNDED_CALL_TRIES || !wasStarved(threadCpuMicros() - before, timeoutMs)) return once;
  }
}

/** Whether a stopped call used less than half its time limit in CPU (µs). */
export function wasStarved(usedMicros: number, timeoutMs: number): boolean {
  return usedMicros < (timeoutMs * 1000) / 2;
}

/**
 * Linux's count of the time this thread has run (ns, first field): the call's own CPU. The process's
 * (process.cpuUsage) also counts its other threads — Temporal's core, the thread pool, the garbage
 * collector — which on a loaded host can pass half the limit while this thread waits its turn.
 */
const THREAD_SCHEDSTAT = '/proc/thread-self/schedstat';
const hasThreadStat = existsSync(THREAD_SCHEDSTAT);

/** CPU time the calling thread has used (µs); the process's where the kernel does not say. */
export function threadCpuMicros(): number {
  if (hasThreadStat) {
    const ns = Number(readFileSync(THREAD_SCHEDSTAT, 'latin1').split(' ', 1)[0]);
    if (Number.isFinite(ns)) return ns / 1000;
  }
  const used = process.cpuUsage();
  return used.user + used.system;
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
