import { z } from 'zod';

/** Resolves when the dependency works, optionally with a line saying how; rejects with the cause. */
export type HealthProbe = () => Promise<void | string>;

export const HealthCheck = z.object({
  ok: z.boolean(),
  latency_ms: z.number(),
  detail: z.string().optional(),
  error: z.string().optional(),
});
export type HealthCheck = z.output<typeof HealthCheck>;

/** How long /api/health waits for one dependency: a probe must answer faster than its caller gives up. */
export const API_PROBE_TIMEOUT_MS = 3000;

async function runProbe(probe: HealthProbe, timeoutMs: number): Promise<HealthCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      probe(),
      new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)),
      ),
    ]);
    return { ok: true, latency_ms: Math.round(performance.now() - started), ...(detail ? { detail } : {}) };
  } catch (err) {
    return { ok: false, latency_ms: Math.round(performance.now() - started), error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs every probe at once, each within `timeoutMs`; ok when all are. */
export async function runProbes(
  probes: Record<string, HealthProbe>,
  timeoutMs: number,
): Promise<{ ok: boolean; checks: Record<string, HealthCheck> }> {
  const names = Object.keys(probes);
  const results = await Promise.all(names.map((n) => runProbe(probes[n] as HealthProbe, timeoutMs)));
  return {
    ok: results.every((r) => r.ok),
    checks: Object.fromEntries(names.map((n, i) => [n, results[i] as HealthCheck])),
  };
}
