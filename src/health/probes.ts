import { Connection as TemporalConnection } from '@temporalio/client';
import type { Connection as MongoConnection } from 'mongoose';
import type { Config } from '../config/settings';
import { connectMongo, pingMongo } from '../db/connection';
import type { PythonSandbox } from '../nodes/code-execution/python-sandbox';
import type { HealthProbe } from './run-probes';

/** The api's Temporal check answers within its health route's own limit (API_PROBE_TIMEOUT_MS). */
const API_TEMPORAL_DEADLINE_MS = 2000;

export function mongoProbe(conn: MongoConnection): HealthProbe {
  return () => pingMongo(conn);
}

/** For a process that holds no connection (the worker's health command): connects, pings, closes. */
export function mongoConnectProbe(config: Pick<Config, 'mongo'>): HealthProbe {
  return async () => {
    const conn = await connectMongo(config);
    try {
      await pingMongo(conn);
    } finally {
      await conn.close();
    }
  };
}

/**
 * A connection of its own with no retry interceptor: a health check answers for this moment, and
 * no retry may outlive it (a retry firing after close throws outside any request).
 */
export function createTemporalProbe(
  address: string,
  deadlineMs = API_TEMPORAL_DEADLINE_MS,
): { probe: HealthProbe; close(): Promise<void> } {
  const connection = TemporalConnection.lazy({ address, interceptors: [] });
  return {
    probe: async () => {
      await connection.withDeadline(Date.now() + deadlineMs, () => connection.workflowService.getSystemInfo({}));
    },
    close: () => connection.close(),
  };
}

/**
 * Whether PythonFuncNode code can run in this process with this configuration: fails when the
 * sandbox cannot start, naming the cause.
 */
export function pythonSandboxProbe(sandbox: PythonSandbox): HealthProbe {
  return async () => {
    const state = await sandbox.state();
    if (!state.ok) throw new Error(state.detail);
    return state.detail;
  };
}

/**
 * What /api/health checks: MongoDB and Temporal, and the Python sandbox only when this process runs
 * nodes (the api hosting a worker). The api alone runs no Python, so it needs no sandbox and does
 * not check one: each worker checks its own (src/processes/worker-health.ts).
 */
export function apiProbes(
  mongo: MongoConnection,
  temporal: HealthProbe,
  hostedWorkerSandbox?: PythonSandbox,
): Record<string, HealthProbe> {
  return {
    mongodb: mongoProbe(mongo),
    temporal,
    ...(hostedWorkerSandbox ? { python_sandbox: pythonSandboxProbe(hostedWorkerSandbox) } : {}),
  };
}
