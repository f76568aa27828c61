import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../src/config/settings';
import type { Models } from '../src/db/models';
import { createRunOutcomes, type RunOutcomes } from '../src/engine/run-outcomes';
import type { Logger } from '../src/logger';
import { ensureReconcilerSchedule } from './reconciler-schedule';
import { ensureRetentionSchedule } from './retention-schedule';
import { createSpurWorkers } from './spur-worker';
import { createTracer } from '../src/telemetry/tracer';

export interface HostedWorker {
  /** The worker's connection, which the api's client shares. */
  connection: NativeConnection;
  /** The api's Temporal client, on that connection: runs it starts begin eagerly on this worker. */
  temporal: Client;
  /** Blocking runs this worker ends are answered from their final save (run-outcomes.ts). */
  outcomes: RunOutcomes;
  /** Settles when the worker stops (its drain after SIGTERM, or stop()). */
  running: Promise<void>;
  stop(): Promise<void>;
}

/**
 * The workers of the task queues in the api's process (the single-host topology: processes/combined.ts,
 * and the test harness's engines). The process that hosts a worker keeps the reconciler's and retention's schedules.
 * The Temporal runtime must be installed first.
 */
export async function hostSpurWorker(config: Readonly<Config>, models: Models, logger: Logger): Promise<HostedWorker> {
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const outcomes = createRunOutcomes();
  // One exporter per process; spans still queued go out once the worker has stopped.
  const tracer = createTracer(config.traces) ?? undefined;
  const workers = await createSpurWorkers(connection, config, models, { outcomes, ...(tracer ? { tracer } : {}) });
  const running = workers.run().finally(() => tracer?.shutdown().catch(() => undefined));
  // Handled until the caller says what a failed worker means (processes/combined.ts exits).
  running.catch(() => undefined);
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  await ensureReconcilerSchedule(temporal, config, logger);
  await ensureRetentionSchedule(temporal, config, logger);
  return {
    connection,
    temporal,
    outcomes,
    running,
    async stop() {
      workers.shutdown();
      await running;
    },
  };
}
