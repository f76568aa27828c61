import { pollDelays } from './poll';
import { reconcilerScheduleId } from '../../temporal/reconciler-schedule';
import { startApi, type TestApi } from './api';
import { client } from './http';
import { startWorker, type TestWorker } from './worker';

export interface Engine {
  api: TestApi;
  http: ReturnType<typeof client>;
  close(): Promise<void>;
}

/** An engine whose worker is a process of its own, which a test may kill, signal or replace. */
export interface SplitEngine extends Engine {
  worker: TestWorker;
}

/**
 * The api with its worker in this process, on their own database and task queue: what
 * `npm run dev` runs (the combined topology).
 */
export async function startEngine(overrides: Record<string, string> = {}): Promise<Engine> {
  const api = await startApi(overrides, { hostWorker: true });
  return { api, http: client(api.baseUrl), close: () => api.close() };
}

/** api (in-process) + a real worker process on their own database and task queue: production's shape. */
export async function startSplitEngine(overrides: Record<string, string> = {}): Promise<SplitEngine> {
  const api = await startApi(overrides);
  const worker = await startWorker(api.env);
  const engine: SplitEngine = {
    api,
    worker,
    http: client(api.baseUrl),
    async close() {
      // The worker a test started in place of a killed one, if any.
      await engine.worker.stop();
      await api.close();
    },
  };
  return engine;
}

/**
 * Closes an engine started with the reconciler on (SPUR_RECONCILE_EVERY_SECONDS): its Temporal
 * Schedule lives on the shared server and would keep firing for a database that is gone.
 */
export async function closeReconcilingEngine(engine: Engine | undefined): Promise<void> {
  if (!engine) return;
  await engine.api.temporal.schedule
    .getHandle(reconcilerScheduleId(engine.api.env.SPUR_WORKFLOW_ID_PREFIX as string))
    .delete()
    .catch(() => undefined);
  await engine.close();
}

export const isFinal = (run: { status: string }) => ['COMPLETED', 'FAILED', 'CANCELED'].includes(run.status);

/**
 * Polls GET /run/{id}/status/ until the run leaves PENDING/RUNNING (or the predicate holds). The bound
 * only turns a hung run into a failure: a file's first model run on a loaded 2-core host has taken
 * over 30 s, so it leaves room for that and stays inside the files' own mocha timeouts.
 */
export async function waitForRun(
  http: ReturnType<typeof client>,
  runId: string,
  done: (run: { status: string }) => boolean = (r) => !['PENDING', 'RUNNING'].includes(r.status),
  timeoutMs = 60_000,
) {
  const deadline = Date.now() + timeoutMs;
  const pause = pollDelays();
  for (;;) {
    const res = await http.get(`/run/${runId}/status/`);
    if (res.status === 200 && done(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${res.body?.status} after ${timeoutMs} ms`);
    await pause();
  }
}
