import { Context } from '@temporalio/activity';

/** How often a node running as a local activity looks for its run's cancel mark, from this long after it started. */
export const CANCEL_WATCH_MS = 1000;

/**
 * Runs a node's work with the signal that stops it. A regular activity's is Temporal's: a cancel
 * reaches it through its heartbeats. A local activity (a short call: a model call or Python code,
 * activity-options.ts) hears of a cancel only when its workflow task next completes, up to 8 s
 * later; so, while it runs, it also looks for the mark the api leaves once Temporal has taken the
 * run's cancel (src/runs/run-cancel.ts), every CANCEL_WATCH_MS, and on it stops the work at once
 * (Python's processes killed, a model request dropped) and ends with `stopped()`: not a failure,
 * which would be retried and the node run again. Ending completes the workflow task, so the cancel,
 * which is on its way, reaches the workflow at once; the workflow waits for it (graph-runner.ts).
 */
export async function stoppingOnCancelMark<T>(
  marked: () => Promise<boolean>,
  work: (signal: AbortSignal) => Promise<T>,
  stopped: () => T,
): Promise<T> {
  const activity = Context.current();
  if (!activity.info.isLocal) return work(activity.cancellationSignal);
  const mark = new AbortController();
  let looking = false;
  const watch = setInterval(() => {
    if (looking || mark.signal.aborted) return;
    looking = true;
    marked()
      .then((yes) => {
        if (yes) mark.abort(new Error('The run was cancelled'));
      })
      // A failed look is tried again at the next interval; Temporal's cancel comes regardless.
      .catch(() => undefined)
      .finally(() => (looking = false));
  }, CANCEL_WATCH_MS);
  try {
    return await work(AbortSignal.any([activity.cancellationSignal, mark.signal]));
  } catch (err) {
    if (mark.signal.aborted && !activity.cancellationSignal.aborted) return stopped();
    throw err;
  } finally {
    clearInterval(watch);
  }
}
