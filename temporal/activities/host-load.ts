import os from 'node:os';

/** One core's CPU times since boot, as os.cpus() reports them (ms). */
export type CoreTimes = os.CpuInfo['times'];

/**
 * The fraction of the host's CPU time spent busy between two readings of every core (0 to 1):
 * everything but idle, over everything. Null when no time passed between them.
 */
export function busyFraction(before: readonly CoreTimes[], after: readonly CoreTimes[]): number | null {
  let busy = 0;
  let total = 0;
  after.forEach((t, i) => {
    const b = before[i];
    if (!b) return;
    const spent = t.user + t.nice + t.sys + t.irq - (b.user + b.nice + b.sys + b.irq);
    const idle = t.idle - b.idle;
    busy += spent;
    total += spent + idle;
  });
  return total > 0 ? busy / total : null;
}

export const SAMPLE_MS = 100;

/** The host's CPU, read every SAMPLE_MS from the first listener on: a process nobody asks reads nothing. */
export function createCpuSampler() {
  const listeners = new Set<(busy: number) => void>();
  let last = os.cpus().map((c) => c.times);
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    const now = os.cpus().map((c) => c.times);
    const busy = busyFraction(last, now);
    last = now;
    if (busy !== null) for (const listener of listeners) listener(busy);
  };
  return {
    listen(listener: (busy: number) => void): void {
      listeners.add(listener);
      timer ??= setInterval(sample, SAMPLE_MS).unref();
    },
  };
}

export type CpuSampler = ReturnType<typeof createCpuSampler>;
