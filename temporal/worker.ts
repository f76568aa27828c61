import path from 'node:path';
import { NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import { loadConfig } from '../src/config';
import { connectMongo } from '../src/db/connection';
import { createModels, syncIndexes } from '../src/db/models';
import { createLogger } from '../src/logger';
import { createEnvService } from '../src/modules/env-mgmt/env-mgmt.service';
import { SecretBox } from '../src/modules/env-mgmt/secret-box';
import { loadSecretKey } from '../src/modules/env-mgmt/secret-key';
import { createActivities } from './activities';

/**
 * The worker process: one NativeConnection, workflows bundled from the barrel, activities wired
 * to MongoDB. SIGINT/SIGTERM (the SDK's default shutdown signals) drain in-flight activities for
 * up to `shutdownGraceTime` before they are cancelled and retried elsewhere.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config, 'worker');
  Runtime.install({ telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } } });
  const mongo = await connectMongo(config);
  const models = createModels(mongo);
  await syncIndexes(models);
  const env = createEnvService(models, new SecretBox(loadSecretKey(config)));
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  try {
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      // Production (and the test harness) load a prebuilt bundle; dev bundles from source at start.
      ...(config.temporal.workflowBundle
        ? { workflowBundle: { codePath: config.temporal.workflowBundle } }
        : { workflowsPath: path.join(__dirname, 'workflows') }),
      activities: createActivities({ models, secret: env.reveal }),
      shutdownGraceTime: '10s',
      // Heartbeats carry cancellation back: at most a second's delay, so a cancelled run's Python
      // or LLM call stops within a second or two instead of after 80% of the heartbeat timeout.
      maxHeartbeatThrottleInterval: '1s',
    });
    logger.info({ taskQueue: config.temporal.taskQueue, address: config.temporal.address }, 'worker running');
    await worker.run();
    logger.info('worker stopped');
  } finally {
    await connection.close();
    await mongo.close();
  }
}

main().catch((err: unknown) => {
  console.error('worker failed:', err);
  process.exit(1);
});
