import path from 'node:path';
import { ThreadPool } from '../../threads/thread-pool.js';
import { RENDER_TIME_LIMIT_MS, timeLimitMessage } from './limits.js';
import type { RenderResult } from './render.js';
import type { RenderJob } from './thread.js';

/**
 * Renders run on a few worker threads, never on the api's or the worker's event loop: a render
 * that loops until its time limit holds one thread, not the process. A thread is replaced when
 * it has to be stopped (work the render's own clock cannot interrupt, such as one huge filter
 * call) or when it runs out of its memory.
 */

/** A render's heap: room for a large input (values reach tens of MB) and the output. */
const THREAD_MEMORY_MB = 512;

/** Renders take microseconds, so two cover the load, and one slow render leaves the other thread. */
export const RENDER_THREADS = 2;

const pool = new ThreadPool<RenderJob, RenderResult>({
  name: 'template render',
  module: path.join(__dirname, `thread${path.extname(__filename)}`),
  threads: RENDER_THREADS,
  memoryMb: THREAD_MEMORY_MB,
  // A render stops itself at RENDER_TIME_LIMIT_MS, counting its own steps; a thread still busy this
  // much later is stuck inside one step and is terminated. The margin covers copying a large input
  // into the thread and a host so loaded that a tiny render gets no CPU for seconds: with 2 s, a
  // one-line prompt failed its node in a cluster test that was restarting PostgreSQL.
  stopAfterMs: RENDER_TIME_LIMIT_MS + 10_000,
  stopped: (reason) => ({
    ok: false,
    message:
      reason === 'time' ? timeLimitMessage() : `the render used more than the memory limit of ${THREAD_MEMORY_MB} MB`,
  }),
});

/** Renders on a pool thread; resolves with the result, rejects only when no thread could render. */
export function renderInThread(job: RenderJob): Promise<RenderResult> {
  return pool.run({
    template: job.template,
    context: job.context,
    ...(job.callbacks ? { callbacks: job.callbacks } : {}),
  });
}
