import path from 'node:path';
import { type NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import type { Config } from '../src/config';
import type { Models } from '../src/db/models';
import { createEnvService } from '../src/modules/env-mgmt/env-mgmt.service';
import { SecretBox } from '../src/modules/env-mgmt/secret-box';
import { loadSecretKey } from '../src/modules/env-mgmt/secret-key';
import { createActivities } from './activities';

/**
 * A worker of Spur's task queue: every workflow and activity, whichever process hosts it (the
 * worker process, or the api in the single-process topology). All workers of a queue must be equal.
 */
export function createSpurWorker(connection: NativeConnection, config: Readonly<Config>, models: Models): Promise<Worker> {
  const env = createEnvService(models, new SecretBox(loadSecretKey(config)));
  return Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    // Production (and the test harness) load a prebuilt bundle; dev bundles from source at start.
    ...(config.temporal.workflowBundle
      ? { workflowBundle: { codePath: config.temporal.workflowBundle } }
      : { workflowsPath: path.join(__dirname, 'workflows') }),
    activities: createActivities({ models, secret: env.reveal, temporal: { taskQueue: config.temporal.taskQueue, workflowIdPrefix: config.temporal.workflowIdPrefix } }),
    shutdownGraceTime: '10s',
    // Heartbeats carry cancellation back: at most a second's delay, so a cancelled run's Python
    // or LLM call stops within a second or two instead of after 80% of the heartbeat timeout.
    maxHeartbeatThrottleInterval: '1s',
  });
}

/** Once per process, before any connection: core's own logs at warnings and errors only. */
export function installRuntime(): void {
  Runtime.install({ telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } } });
}
