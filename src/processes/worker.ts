import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../config/load-config';
import { connectMongo } from '../db/connection';
import { createModels } from '../db/models';
import { prepareDatabase } from '../db/prepare-database';
import { createLogger } from '../logger';
import { ensureReconcilerSchedule } from '../../temporal/reconciler-schedule';
import { createSpurWorker, installRuntime } from '../../temporal/spur-worker';
import { createTracer } from '../telemetry/tracer';

/**
 * The worker process: one NativeConnection, workflows bundled from the barrel, activities wired
 * to MongoDB. SIGINT/SIGTERM (the SDK's default shutdown signals) drain in-flight activities for
 * up to `shutdownGraceTime` before they are cancelled and retried elsewhere.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config, 'worker');
  installRuntime();
  const mongo = await connectMongo(config);
  const models = createModels(mongo);
  await prepareDatabase(models);
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  // One exporter per process; spans still queued go out once the worker has drained.
  const tracer = createTracer(config.traces) ?? undefined;
  try {
    const worker = await createSpurWorker(connection, config, models, tracer ? { tracer } : {});
    await ensureReconcilerSchedule(new Client({ connection, namespace: config.temporal.namespace }), config, logger);
    logger.info({ taskQueue: config.temporal.taskQueue, address: config.temporal.address }, 'worker running');
    await worker.run();
    logger.info('worker stopped');
  } finally {
    await tracer?.shutdown().catch(() => undefined);
    await connection.close();
    await mongo.close();
  }
}

main().catch((err: unknown) => {
  console.error('worker failed:', err);
  process.exit(1);
});
