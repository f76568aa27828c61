import path from 'node:path';
import { type NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import type { Config } from '../src/config';
import type { Models } from '../src/db/models';
import { valuesOf } from '../src/db/values';
import { storedRunLauncher } from '../src/modules/runs/run-launch';
import { PythonSandbox } from '../src/nodes/code-execution/python-sandbox';
import { createEnvService } from '../src/modules/env-mgmt/env-mgmt.service';
import { SecretBox } from '../src/modules/env-mgmt/secret-box';
import { loadSecretKey } from '../src/modules/env-mgmt/secret-key';
import { createLanceStore } from '../src/rag/lance-store';
import { createRetriever } from '../src/rag/retrieval';
import { createActivities } from './activities';

/**
 * A worker of Spur's task queue: every workflow and activity, whichever process hosts it (the
 * worker process, or the api in the single-process topology). All workers of a queue must be equal.
 */
export function createSpurWorker(connection: NativeConnection, config: Readonly<Config>, models: Models, pythonSandbox = new PythonSandbox(config.python)): Promise<Worker> {
  const env = createEnvService(models, new SecretBox(loadSecretKey(config)));
  const vectors = createLanceStore(config.rag.vectorStoreUri, config.rag);
  const retriever = createRetriever({ models, vectors, secret: env.reveal }).forNode;
  const queue = { taskQueue: config.temporal.taskQueue, workflowIdPrefix: config.temporal.workflowIdPrefix };
  return Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    // Production (and the test harness) load a prebuilt bundle; dev bundles from source at start.
    ...(config.temporal.workflowBundle
      ? { workflowBundle: { codePath: config.temporal.workflowBundle } }
      : { workflowsPath: path.join(__dirname, 'workflows') }),
    activities: createActivities({ models, secret: env.reveal, values: valuesOf(models.conn, config.values), vectors, retriever, pythonSandbox, temporal: queue, launchStoredRun: storedRunLauncher(models, queue) }),
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
