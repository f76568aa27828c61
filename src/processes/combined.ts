import { loadConfig } from '../config/load-config';
import { connectMongo } from '../db/connection';
import { createModels } from '../db/models';
import { markOlderRecordsInBackground, prepareDatabase } from '../db/prepare-database';
import { createLogger } from '../logger';
import { refuseInsecureListen, serveApi } from '../serve-api';
import { hostSpurWorker } from '../../temporal/hosted-worker';
import { installRuntime } from '../../temporal/spur-worker';
import { sdkMetrics } from '../metrics/sdk-metrics';
import { PythonSandbox } from '../nodes/code-execution/python-sandbox';

/**
 * The api and a worker in one process (single host: `npm run start:combined`). The client shares
 * the worker's NativeConnection, so runs start eagerly: the server hands the first workflow task
 * back in the start response and this worker runs it at once, skipping the task dispatch. More
 * worker processes may still join the task queue. On SIGTERM the api drains first, then the worker.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config, 'api');
  refuseInsecureListen(config);
  // The worker's SDK metrics are served beside the api's, on the one metrics port.
  const sdk = config.metrics.port === null ? null : await sdkMetrics();
  installRuntime(sdk?.bindAddress);
  const mongo = await connectMongo(config);
  const models = createModels(mongo);
  await prepareDatabase(models);
  void markOlderRecordsInBackground(models, logger);
  const { connection, temporal, outcomes, running } = await hostSpurWorker(config, models, logger);
  running.catch((err: unknown) => {
    console.error('worker failed:', err);
    process.exit(1);
  });
  await serveApi({
    config,
    logger,
    mongo,
    models,
    temporal,
    eagerStart: true,
    outcomes,
    ...(sdk ? { sdkMetrics: sdk.read } : {}),
    // This process runs Python nodes: its health says whether the sandbox starts here.
    hostedWorkerSandbox: new PythonSandbox(config.python),
    // The SDK's own SIGTERM handler has begun the worker's drain: wait for it, then close.
    afterDrain: async () => {
      await running.catch(() => undefined);
      await connection.close();
      await mongo.close();
    },
  });
  logger.info({ taskQueue: config.temporal.taskQueue }, 'worker running in the api process');
}

main().catch((err: unknown) => {
  console.error('api failed to start:', err);
  process.exit(1);
});
