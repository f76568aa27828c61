import { Worker } from 'node:worker_threads';
import { threadBoot } from './thread-boot';

/**
 * A few worker threads that run jobs off the caller's event loop: a job that spins, or a library
 * call that cannot be interrupted, holds one thread, never the process. Each thread has a heap
 * limit (resourceLimits); a job still running at its time limit has its thread terminated, and a
 * thread that dies (out of its heap, or terminated) is replaced for the jobs after it. Idle
 * threads do not keep the process alive.
 *
 * The thread module (serve-jobs.ts) answers each job with one message, and says `ready`
 * once its modules are loaded, so that a job's clock starts with the job.
 */

export interface ThreadPoolOptions<Result> {
  /** Absolute path of the thread's module (a .ts file, run through tsx like this process). */
  module: string;
  threads: number;
  /** The heap (old generation) of each thread. */
  memoryMb: number;
  /** A job running this long has its thread terminated. */
  stopAfterMs: number;
  /** What a caller gets when its job was stopped at the time limit or ran out of the heap. */
  stopped(reason: 'time' | 'memory'): Result;
  /** Names the pool in errors ("the template render thread stopped: …"). */
  name: string;
}

export interface RunOptions {
  /** This job's time limit, when it is not the pool's. */
  stopAfterMs?: number;
}

interface Pending<Job, Result> {
  job: Job;
  options: RunOptions;
  resolve(result: Result): void;
  reject(err: Error): void;
}

export class ThreadPool<Job, Result> {
  private readonly queue: Pending<Job, Result>[] = [];
  private readonly idle: PoolThread<Job, Result>[] = [];
  private threads = 0;
  private busy = 0;

  constructor(readonly options: ThreadPoolOptions<Result>) {}

  /** Runs the job on a thread; resolves with its answer (or `stopped(…)`), rejects only when no thread could run it. */
  run(job: Job, options: RunOptions = {}): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ job, options, resolve, reject });
      this.dispatch();
    });
  }

  /** Jobs on a thread right now (queued ones not counted). */
  running(): number {
    return this.busy;
  }

  /** @internal for PoolThread */
  dispatch(): void {
    while (this.queue.length > 0) {
      const thread = this.idle.pop() ?? (this.threads < this.options.threads ? new PoolThread(this) : undefined);
      if (!thread) return;
      this.busy++;
      thread.start(this.queue.shift() as Pending<Job, Result>);
    }
  }

  /** @internal a thread finished its job and takes the next one */
  released(thread: PoolThread<Job, Result>): void {
    this.busy--;
    this.idle.push(thread);
    this.dispatch();
  }

  /** @internal a thread left the pool; `hadJob` when it was running one */
  retired(thread: PoolThread<Job, Result>, hadJob: boolean): void {
    if (hadJob) this.busy--;
    this.threads--;
    const at = this.idle.indexOf(thread);
    if (at !== -1) this.idle.splice(at, 1);
    this.dispatch();
  }

  /** @internal */
  counted(): void {
    this.threads++;
  }
}

class PoolThread<Job, Result> {
  private readonly worker: Worker;
  private ready = false;
  private retired = false;
  private pending: Pending<Job, Result> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly pool: ThreadPool<Job, Result>) {
    const { module, memoryMb } = pool.options;
    this.worker = new Worker(threadBoot(module), { eval: true, resourceLimits: { maxOldGenerationSizeMb: memoryMb } });
    pool.counted();
    // An idle pool does not keep the process alive; a thread with a job does (see start).
    this.worker.unref();
    this.worker.on('message', (message: 'ready' | Result) => this.receive(message));
    this.worker.on('error', (err) => this.crashed(err));
    this.worker.on('exit', (code) => this.crashed(new Error(`the thread exited with code ${code}`)));
  }

  start(pending: Pending<Job, Result>): void {
    this.pending = pending;
    this.worker.ref();
    if (this.ready) this.send(pending);
  }

  private send(pending: Pending<Job, Result>): void {
    this.timer = setTimeout(() => this.overtime(), pending.options.stopAfterMs ?? this.pool.options.stopAfterMs);
    try {
      this.worker.postMessage(pending.job);
    } catch (err) {
      // A job that cannot be copied (it holds a function): the caller's bug, not the job's.
      this.finish();
      pending.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private receive(message: 'ready' | Result): void {
    if (message === 'ready') {
      this.ready = true;
      if (this.pending) this.send(this.pending);
      return;
    }
    const pending = this.pending;
    this.finish();
    pending?.resolve(message);
  }

  /** The job is done: the thread takes the next one. */
  private finish(): void {
    clearTimeout(this.timer);
    this.pending = undefined;
    this.worker.unref();
    this.pool.released(this);
  }

  private overtime(): void {
    const pending = this.retire();
    void this.worker.terminate();
    pending?.resolve(this.pool.options.stopped('time'));
  }

  private crashed(err: Error & { code?: string }): void {
    if (this.retired) return;
    const pending = this.retire();
    if (!pending) return;
    if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') pending.resolve(this.pool.options.stopped('memory'));
    else
      pending.reject(
        new Error(
          this.ready
            ? `The ${this.pool.options.name} thread stopped: ${err.message}`
            : `The ${this.pool.options.name} thread did not start: ${err.message}`,
          { cause: err },
        ),
      );
  }

  /** Takes this thread out of the pool (a new one starts for queued jobs); gives back its job. */
  private retire(): Pending<Job, Result> | undefined {
    const pending = this.pending;
    this.retired = true;
    this.pending = undefined;
    clearTimeout(this.timer);
    this.pool.retired(this, pending !== undefined);
    return pending;
  }
}
