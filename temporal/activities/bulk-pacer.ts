import type { CpuSampler } from './host-load';

/** Past the target, the allowance halves each sample; below it, while work waits, it grows by a quarter. */
const BACK_OFF = 0.5;
const RAMP_UP = 1.25;

interface Waiter {
  wake: () => void;
  reject: (reason: unknown) => void;
}

export interface PacerLimits {
  /** The host CPU fraction past which bulk work gives way (SPUR_BULK_TARGET_CPU); 1: never. */
  targetCpu: number;
  /**
   * Whether anything needs the room now (work of the main queue ran lately): while nothing does,
   * bulk work may use the whole host, so a batch alone runs at full speed.
   */
  needed?: () => boolean;
  /** Always allowed, however busy the host: a batch on a host busy with something else still moves. */
  floor: number;
  /** Never more than this in flight. */
  ceiling: number;
}

/**
 * How much bulk work may be in flight, following the host's CPU: halved each sample (100 ms) while
 * the host is past the target and other work needs the room, a quarter more while it is below (or
 * nothing else runs) and work waits, between the floor and the ceiling: a steady ramp, never every
 * held piece at once the moment the host frees up. It paces the bulk queue's activity slots
 * (temporal/worker-slots.ts) and the rows of inline batch chunks, which run inside one activity
 * where slots cannot reach.
 */
export function createBulkPacer(sampler: CpuSampler, limits: PacerLimits) {
  const floor = Math.max(1, Math.min(limits.floor, limits.ceiling));
  let allowed = floor;
  let inFlight = 0;
  let listening = false;
  /** Who waits, first come first served. */
  const waiting = new Set<() => void>();
  /** One listener per signal, however many wait on it (an inline chunk's rows share theirs). */
  const waitersOf = new WeakMap<AbortSignal, Set<Waiter>>();
  // At a target of 1 the host's load never holds bulk back: only the ceiling does.
  const open = () => inFlight < (limits.targetCpu >= 1 ? limits.ceiling : Math.floor(allowed));
  const wakeAsAllowed = () => {
    for (const wake of waiting) {
      if (!open()) return;
      waiting.delete(wake);
      inFlight++;
      wake();
    }
  };
  const follow = (busy: number) => {
    const target = limits.needed?.() === false ? 1 : limits.targetCpu;
    // Grows only while work waits for it: an allowance nobody used says nothing about the load.
    if (busy > target) allowed = Math.max(floor, allowed * BACK_OFF);
    else if (waiting.size > 0) allowed = Math.min(limits.ceiling, Math.max(allowed + 1, allowed * RAMP_UP));
    wakeAsAllowed();
  };
  const pacer = {
    /** Takes a place at once when one is free (an eager task's slot must not wait). */
    tryAcquire(): boolean {
      if (waiting.size > 0 || !open()) return false;
      inFlight++;
      return true;
    },
    /** Resolves once a place is free; rejects with the signal's reason when it aborts first. */
    acquire(signal: AbortSignal): Promise<void> {
      if (!listening && limits.targetCpu < 1) {
        listening = true;
        sampler.listen(follow);
      }
      if (pacer.tryAcquire()) return Promise.resolve();
      if (signal.aborted) return Promise.reject(signal.reason);
      return new Promise((resolve, reject) => {
        let waiters = waitersOf.get(signal);
        if (!waiters) {
          const mine = new Set<Waiter>();
          waitersOf.set(signal, mine);
          signal.addEventListener(
            'abort',
            () => {
              for (const w of mine) {
                waiting.delete(w.wake);
                w.reject(signal.reason);
              }
              mine.clear();
            },
            { once: true },
          );
          waiters = mine;
        }
        const entry: Waiter = {
          wake: () => {
            waiters.delete(entry);
            resolve();
          },
          reject,
        };
        waiters.add(entry);
        waiting.add(entry.wake);
      });
    },
    release(): void {
      inFlight--;
      wakeAsAllowed();
    },
  };
  return pacer;
}

export type BulkPacer = ReturnType<typeof createBulkPacer>;

/**
 * Whether the main queue's work (runs someone waits on, schedule fires) is going on in this process:
 * a task of it in flight, or one that ended less than `quietMs` ago. Bulk work gives way meanwhile,
 * and takes the whole host once it has been quiet that long. A task in flight counts however long
 * it runs: counted only by its start, a run waiting on a slow step (or slowed by a loaded host)
 * looked quiet after `quietMs`, and bulk work took the host from it.
 */
export function createRecentWork(quietMs: number) {
  let last = Number.NEGATIVE_INFINITY;
  let inFlight = 0;
  return {
    /** A task started. */
    saw(): void {
      inFlight++;
      last = Date.now();
    },
    /** A task that `saw` counted ended. */
    ended(): void {
      inFlight = Math.max(0, inFlight - 1);
      last = Date.now();
    },
    recent: (): boolean => inFlight > 0 || Date.now() - last < quietMs,
  };
}

export type RecentWork = ReturnType<typeof createRecentWork>;
