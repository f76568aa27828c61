import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { RENDER_TIME_LIMIT_MS, timeLimitMessage } from './limits.js';
import type { RenderResult } from './render.js';
import type { RenderJob } from './thread.js';

/**
 * Renders run on a few worker threads, never on the api's or the worker's event loop: a render
 * that loops until its time limit holds one thread, not the process. A thread is replaced when
 * it has to be stopped (work the render's own clock cannot interrupt, such as one huge filter
 * call) or when it runs out of its memory.
 */

/** Two renders at once: renders take microseconds, so two cover the load, and one slow render leaves the other thread. */
const THREADS = 2;
/** A render's heap: room for a large input (values reach tens of MB) and the output. */
const THREAD_MEMORY_MB = 512;
/**
 * A render stops itself at RENDER_TIME_LIMIT_MS; a thread still busy this much later is
 * terminated. The margin also covers copying a large input into the thread.
 */
const STOP_THREAD_AFTER_MS = RENDER_TIME_LIMIT_MS + 2000;

// The thread runs the TypeScript sources the way this process does (tsx), from an inline script
// because a worker cannot be started from a .ts file.
const BOOT = `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register();\nrequire(${JSON.stringify(path.join(__dirname, 'thread.ts'))});`;

interface Pending extends RenderJob {
  resolve(result: RenderResult): void;
  reject(err: Error): void;
}

const queue: Pending[] = [];
const idle: RenderThread[] = [];
let threads = 0;

/** Renders on a pool thread; resolves with the result, rejects only when no thread could render. */
export function renderInThread(job: RenderJob): Promise<RenderResult> {
  return new Promise((resolve, reject) => {
    queue.push({ ...job, resolve, reject });
    dispatch();
  });
}

function dispatch(): void {
  while (queue.length > 0) {
    const thread = idle.pop() ?? (threads < THREADS ? new RenderThread() : undefined);
    if (!thread) return;
    thread.start(queue.shift() as Pending);
  }
}

class RenderThread {
  private readonly worker: Worker;
  private ready = false;
  private retired = false;
  private job: Pending | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor() {
    this.worker = new Worker(BOOT, { eval: true, resourceLimits: { maxOldGenerationSizeMb: THREAD_MEMORY_MB } });
    threads++;
    // An idle pool does not keep the process alive; a thread with a render does (see start).
    this.worker.unref();
    this.worker.on('message', (message: 'ready' | RenderResult) => this.receive(message));
    this.worker.on('error', (err) => this.crashed(err));
    this.worker.on('exit', (code) => this.crashed(new Error(`the render thread exited with code ${code}`)));
  }

  start(job: Pending): void {
    this.job = job;
    this.worker.ref();
    if (this.ready) this.send(job);
  }

  private send(job: Pending): void {
    this.timer = setTimeout(() => this.overtime(), STOP_THREAD_AFTER_MS);
    try {
      this.worker.postMessage({ template: job.template, context: job.context } satisfies RenderJob);
    } catch (err) {
      // An input that cannot be copied (it holds a function): the caller's bug, not the template's.
      this.finish();
      job.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private receive(message: 'ready' | RenderResult): void {
    if (message === 'ready') {
      this.ready = true;
      if (this.job) this.send(this.job);
      return;
    }
    const job = this.job;
    this.finish();
    job?.resolve(message);
  }

  /** The render is done: the thread takes the next one. */
  private finish(): void {
    clearTimeout(this.timer);
    this.job = undefined;
    this.worker.unref();
    idle.push(this);
    dispatch();
  }

  private overtime(): void {
    const job = this.retire();
    void this.worker.terminate();
    job?.resolve({ ok: false, message: timeLimitMessage() });
  }

  private crashed(err: Error & { code?: string }): void {
    if (this.retired) return;
    const job = this.retire();
    if (!job) return;
    if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') job.resolve({ ok: false, message: `the render used more than the memory limit of ${THREAD_MEMORY_MB} MB` });
    else job.reject(new Error(this.ready ? `The template render thread stopped: ${err.message}` : `The template render thread did not start: ${err.message}`, { cause: err }));
  }

  /** Takes this thread out of the pool (a new one starts for queued renders); gives back its render. */
  private retire(): Pending | undefined {
    const job = this.job;
    this.retired = true;
    this.job = undefined;
    clearTimeout(this.timer);
    threads--;
    const at = idle.indexOf(this);
    if (at !== -1) idle.splice(at, 1);
    dispatch();
    return job;
  }
}
