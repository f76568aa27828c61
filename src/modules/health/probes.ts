import { Connection as TemporalConnection } from '@temporalio/client';
import type { Connection as MongoConnection } from 'mongoose';
import { pingMongo } from '../../db/connection';
import type { PythonSandbox } from '../../nodes/code-execution/python-sandbox';
import type { HealthProbe } from './health.routes';

const DEADLINE_MS = 2000;

export function mongoProbe(conn: MongoConnection): HealthProbe {
  return () => pingMongo(conn);
}

/**
 * A connection of its own with no retry interceptor: a health check answers for this moment, and
 * no retry may outlive it (a retry firing after close throws outside any request).
 */
export function createTemporalProbe(address: string): { probe: HealthProbe; close(): Promise<void> } {
  const connection = TemporalConnection.lazy({ address, interceptors: [] });
  return {
    probe: async () => {
      await connection.withDeadline(Date.now() + DEADLINE_MS, () => connection.workflowService.getSystemInfo({}));
    },
    close: () => connection.close(),
  };
}

/**
 * Whether PythonFuncNode code can run on this host with this configuration (the api checks with the
 * same image and settings as its workers): degraded when the sandbox cannot start, naming the cause.
 */
export function pythonSandboxProbe(sandbox: PythonSandbox): HealthProbe {
  return async () => {
    const state = await sandbox.state();
    if (!state.ok) throw new Error(state.detail);
    return state.detail;
  };
}
