import { setTimeout as sleep } from 'node:timers/promises';
import { storageFailureKind } from './failure-kinds';

/** Longest pause between tries while the database is away. */
const MAX_PAUSE_MS = 5000;

/**
 * Runs a read or write a node depends on, waiting out a database outage instead of failing: a
 * failed node attempt would repeat work that already happened (a model call paid for) or use up
 * the node's retries on an outage that is not the node's fault. Tries again for as long as the
 * database is unavailable (any other error is thrown at once: it is the node's to handle), calling
 * `whileWaiting` before each pause so the activity keeps heartbeating; gives up when `signal` is
 * aborted.
 */
export async function outlastOutage<T>(
  work: () => Promise<T>,
  opts: { signal: AbortSignal; whileWaiting(): void },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (opts.signal.aborted || storageFailureKind(err) !== 'unavailable') throw err;
      opts.whileWaiting();
      // An abort ends the pause early; the next try's failure is then thrown.
      await sleep(Math.min(250 * 2 ** attempt, MAX_PAUSE_MS), undefined, { signal: opts.signal }).catch(
        () => undefined,
      );
    }
  }
}
