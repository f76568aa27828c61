import { z } from 'zod';
import { isAuthenticated } from '../../http/api-keys';
import { defineRoute, type MountableRoute } from '../../http/route';
import { RETRY_AFTER_SECONDS } from '../../http/dependency-errors';
import { API_PROBE_TIMEOUT_MS, HealthCheck, type HealthProbe, runProbes } from '../../health/run-probes';

export type { HealthProbe } from '../../health/run-probes';

const HealthResponse = z.object({
  status: z.enum(['ok', 'degraded']),
  /** Only for a caller with a key or session (or when no keys are configured): it names versions, paths and errors. */
  checks: z.record(z.string(), HealthCheck).optional(),
});

/**
 * Checks every dependency; 503 when one is down, so orchestrators can route around the instance.
 * Open to anyone (probes send no key), but what each check found only goes to authenticated callers.
 */
export function healthRoutes(probes: Record<string, HealthProbe>): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      permission: 'anyone',
      summary: 'MongoDB and Temporal reachability; in the single-process topology, whether the Python sandbox starts',
      tags: ['health'],
      response: HealthResponse,
      handler: async (_input, ctx) => {
        const { ok, checks } = await runProbes(probes, API_PROBE_TIMEOUT_MS);
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
