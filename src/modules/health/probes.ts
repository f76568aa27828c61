import { Connection as TemporalConnection } from '@temporalio/client';
import type { Connection as MongoConnection } from 'mongoose';
import { pingMongo } from '../../db/connection';
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
