import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../config/load-config';
import { connectMongo } from '../db/connection';
import { createModels } from '../db/models';
import { prepareDatabase } from '../db/prepare-database';
import { createLogger } from '../logger';
import { ensureReconcilerSchedule } from '../../temporal/reconciler-schedule';
import { ensureRetentionSchedule } from '../../temporal/retention-schedule';
import { createSpurWorkers, installRuntime } from '../../temporal/spur-worker';
import { createTracer } from '../telemetry/tracer';
import { serveMetrics } from '../metrics/metrics-server';
import { sdkMetrics } from '../metrics/sdk-metrics';
import { bulkTaskQueue } from '../contracts/task-queues';

/**
 * The worker process: one NativeConnection, workflows bundled from the barrel, activities wired
 * to MongoDB. SIGINT/SIGTERM (the SDK's default shutdown signals) stop its polling at once and let
 * in-flight activities finish for up to SPUR_WORKER_SHUTDOWN_SECONDS before they are cancelled and
 * retried elsewhere; then the process exits 0.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config, 'worker');
  const sdk = config.metrics.port === null ? null : await sdkMetrics();
  installRuntime(sdk?.bindAddress);
  const mongo = await connectMongo(config);
  const models = createModels(mongo);
  await prepareDatabase(models);
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  // One exporter per process; spans still queued go out once the worker has drained.
  const tracer = createTracer(config.traces) ?? undefined;
  let metricsServer: Awaited<ReturnType<typeof serveMetrics>> = null;
  try {
    const workers = await createSpurWorkers(connection, config, models, tracer ? { tracer } : {});
    metricsServer = await serveMetrics(config.metrics, sdk?.read);
    if (metricsServer)
      logger.info({ url: `http://${config.metrics.host}:${metricsServer.port}/metrics` }, 'metrics listening');
    const client = new Client({ connection, namespace: config.temporal.namespace });
    await ensureReconcilerSchedule(client, config, logger);
    await ensureRetentionSchedule(client, config, logger);
    logger.info(
      {
        taskQueue: config.temporal.taskQueue,
        bulkTaskQueue: bulkTaskQueue(config.temporal.taskQueue),
        address: config.temporal.address,
      },
      'worker running',
    );
    await workers.run();
    logger.info('worker stopped');
  } finally {
    // A scraper's keep-alive connection (Prometheus reuses it every scrape) would keep the drained
    // process alive: closing the server closes its idle connections too.
    await metricsServer?.close();
    await tracer?.shutdown().catch(() => undefined);
    await connection.close();
    await mongo.close();
  }
}

main().catch((err: unknown) => {
  console.error('worker failed:', err);
  process.exit(1);
});
