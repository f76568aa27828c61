import { parentPort } from 'node:worker_threads';

/**
 * The thread side of a ThreadPool: answers each job with one message, one job at a time (the pool
 * sends the next only after the answer). Says `ready` once the thread's modules are loaded and
 * `prepare` has settled, so a job's time limit never counts the thread's own start (a failed
 * `prepare` is the job's to meet again). `answer` must not throw: a failure is part of its result.
 */
export function serveJobs<Job, Result>(
  answer: (job: Job) => Result | Promise<Result>,
  prepare: () => Promise<unknown> = async () => undefined,
): void {
  const port = parentPort;
  if (!port) throw new Error('this module runs as a worker thread of a ThreadPool');
  port.on('message', (job: Job) => {
    void Promise.resolve(answer(job)).then((result) => port.postMessage(result));
  });
  void prepare()
    .catch(() => undefined)
    .then(() => port.postMessage('ready'));
}
