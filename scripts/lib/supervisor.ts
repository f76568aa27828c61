// Keeps a process running: when it exits without being asked to, it is started again after a
// backoff, with a log line each time. Generic over what it runs (a spec) and how it retries (a
// policy), so the dev topology can change without touching this.
import { type ManagedProcess, type SpawnManagedOptions, spawnManaged } from './processes';

export interface RestartPolicy {
  /** Wait before the first restart. */
  initialDelayMs: number;
  /** Each consecutive quick crash multiplies the wait by this, up to maxDelayMs. */
  factor: number;
  maxDelayMs: number;
  /** A process that stayed up this long counts as healthy again: the next crash restarts at initialDelayMs. */
  healthyAfterMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 500,
  factor: 2,
  maxDelayMs: 30_000,
  healthyAfterMs: 60_000,
};

export interface Supervised {
  readonly name: string;
  /** The process running now (replaced at each restart). */
  readonly current: ManagedProcess;
  /** How many times it was restarted. */
  readonly restarts: number;
  /** Stops it for good (no restart). */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/** The wait before restart number `consecutive` (1-based) of a process that keeps crashing. */
export function restartDelay(policy: RestartPolicy, consecutive: number): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** Math.max(0, consecutive - 1));
}

export function supervise(spec: SpawnManagedOptions, policy: RestartPolicy, log: (line: string) => void): Supervised {
  let current = spawnManaged(spec);
  let startedAt = Date.now();
  let restarts = 0;
  let consecutive = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const watch = (p: ManagedProcess): void => {
    void p.exited.then((code) => {
      if (stopped) return;
      consecutive = Date.now() - startedAt >= policy.healthyAfterMs ? 1 : consecutive + 1;
      const delay = restartDelay(policy, consecutive);
      log(`${spec.name} exited (code ${code}); restarting in ${(delay / 1000).toFixed(1)} s (restart ${restarts + 1})`);
      timer = setTimeout(() => {
        if (stopped) return;
        restarts++;
        current = spawnManaged(spec);
        startedAt = Date.now();
        watch(current);
      }, delay);
    });
  };
  watch(current);

  return {
    name: spec.name,
    get current() {
      return current;
    },
    get restarts() {
      return restarts;
    },
    async stop(signal, graceMs) {
      stopped = true;
      clearTimeout(timer);
      await current.stop(signal, graceMs);
    },
  };
}
