import type { Config } from '../config/settings';
import { PythonSandbox } from '../nodes/code-execution/python-sandbox';
import { createTemporalProbe, mongoConnectProbe, pythonSandboxProbe } from './probes';
import { type HealthCheck, runProbes } from './run-probes';

/**
 * Generous next to /api/health's: a fresh process resolves the interpreter and starts a sandbox
 * cold, on a host that may be busy running nodes. Below compose's health check timeout.
 */
const WORKER_PROBE_TIMEOUT_MS = 15_000;

export interface WorkerHealth {
  ok: boolean;
  /** One line: failures first, each naming its check and cause. */
  line: string;
}

/**
 * What a worker needs to run nodes, checked from inside its container with its own settings: a
 * Python sandbox starts, and MongoDB and Temporal answer.
 */
export async function checkWorkerHealth(config: Readonly<Config>): Promise<WorkerHealth> {
  // A fresh process's first connection, on a host that may be busy: the same budget as the others.
  const temporal = createTemporalProbe(config.temporal.address, WORKER_PROBE_TIMEOUT_MS);
  try {
    const { ok, checks } = await runProbes(
      {
        python_sandbox: pythonSandboxProbe(new PythonSandbox(config.python)),
        mongodb: mongoConnectProbe(config),
        temporal: temporal.probe,
      },
      WORKER_PROBE_TIMEOUT_MS,
    );
    return { ok, line: describe(ok, checks) };
  } finally {
    await temporal.close();
  }
}

function describe(ok: boolean, checks: Record<string, HealthCheck>): string {
  const entries = Object.entries(checks).sort(([, a], [, b]) => Number(a.ok) - Number(b.ok));
  const parts = entries.map(([name, c]) =>
    c.ok ? `${name} ok${c.detail ? ` (${c.detail})` : ''}` : `${name} FAILED: ${c.error ?? 'unknown error'}`,
  );
  return oneLine(`worker ${ok ? 'healthy' : 'unhealthy'}: ${parts.join(' | ')}`);
}

/** Docker keeps a health check's output for `docker inspect`: one line reads well there. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
