import { z } from 'zod';
import { isAuthenticated } from '../../http/api-keys';
import { defineRoute, type MountableRoute } from '../../http/route';
import { RETRY_AFTER_SECONDS } from '../../http/dependency-errors';

/** Resolves when the dependency works, optionally with a line saying how; rejects with the cause. */
export type HealthProbe = () => Promise<void | string>;

const Check = z.object({ ok: z.boolean(), latency_ms: z.number(), detail: z.string().optional(), error: z.string().optional() });
const HealthResponse = z.object({
  status: z.enum(['ok', 'degraded']),
  /** Only for a caller with a key or session (or when no keys are configured): it names versions, paths and errors. */
  checks: z.record(z.string(), Check).optional(),
});
const PROBE_TIMEOUT_MS = 3000;

async function runProbe(probe: HealthProbe): Promise<z.output<typeof Check>> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      probe(),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS))),
    ]);
    return { ok: true, latency_ms: Math.round(performance.now() - started), ...(detail ? { detail } : {}) };
  } catch (err) {
    return { ok: false, latency_ms: Math.round(performance.now() - started), error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Checks every dependency; 503 when one is down, so orchestrators can route around the instance.
 * Open to anyone (probes send no key), but what each check found only goes to authenticated callers.
 */
export function healthRoutes(probes: Record<string, HealthProbe>): MountableRoute[] {
  return [
    defineRoute({
      method: 'get', path: '/health', summary: 'MongoDB and Temporal reachability; whether the Python sandbox starts', tags: ['health'],
      response: HealthResponse,
      handler: async (_input, ctx) => {
        const names = Object.keys(probes);
        const results = await Promise.all(names.map((n) => runProbe(probes[n] as HealthProbe)));
        const checks = Object.fromEntries(names.map((n, i) => [n, results[i]]));
        const ok = results.every((r) => r.ok);
        if (!ok) {
          ctx.status = 503;
          ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
        }
        const status = ok ? 'ok' : 'degraded';
        return isAuthenticated(ctx.state) ? { status, checks } : { status };
      },
    }),
  ];
}
