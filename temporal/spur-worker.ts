import { inboundCallbackUrl } from '../src/secrets/inbound-callback-token';
import v8 from 'node:v8';
import { Context } from '@temporalio/activity';
import {
  type NativeConnection,
  Runtime,
  type Worker,
  type WorkerOptions,
  makeTelemetryFilterString,
} from '@temporalio/worker';
import { createWorkerSlots } from './worker-slots';
import { workerClass } from './activation-watchdog';
import { bulkTaskQueue } from '../src/contracts/task-queues';
import type { Config } from '../src/config/settings';
import type { Models } from '../src/db/models';
import { composeKernel } from '../src/kernel';
import { composeRunActionSteps } from '../src/runs/run-action-kit';
import { metrics } from '../src/metrics/metrics';
import { PythonSandbox } from '../src/nodes/code-execution/python-sandbox';
import { createCredentials } from '../src/secrets/credentials';
import { loadSecretKey } from '../src/secrets/secret-key';
import { createRetriever } from '../src/rag/retrieval';
import { createActivities } from './activities';
import { workspaceActivities } from './workspace-activities';
import { workflowBundleCode } from './workflow-bundle';
import { openCallbackSecret } from '../src/secrets/callback-secret';
import type { RunOutcomes } from '../src/engine/run-outcomes';
import type { SpurTracer } from '../src/telemetry/tracer';

/** The workers of one process: the main task queue's and the bulk queue's, run and stopped together. */
export interface SpurWorkers {
  /** Settles once both have stopped; rejects (stopping the other) when either fails. */
  run(): Promise<void>;
  /** Begins both drains (the SDK's own SIGTERM handler does so too). */
  shutdown(): void;
}

/**
 * The workers of Spur's task queues, whichever process hosts them (the worker process, or the api
 * in the single-process topology): every workflow and activity on the main queue, and the same on
 * the bulk queue (src/contracts/task-queues.ts), whose slots, and the rows of inline batch chunks,
 * give way to the main queue's work while the host is busy (worker-slots.ts). All workers of a
 * queue must be equal.
 * `hosted.outcomes`: the api in this process answers blocking runs from their final saves.
 * `hosted.tracer`: where run traces go (tracing on); its owner flushes it once the workers stop.
 */
export async function createSpurWorkers(
  connection: NativeConnection,
  config: Readonly<Config>,
  models: Models,
  hosted: { outcomes?: RunOutcomes; tracer?: SpurTracer } = {},
): Promise<SpurWorkers> {
  const secretKey = loadSecretKey(config);
  // The reconciler's launcher: a start Temporal refuses leaves the run PENDING for its next pass.
  const kernel = composeKernel({
    models,
    config,
    secretKey,
    temporal: () => Context.current().client,
    eagerStart: false,
    whenRefused: 'leave-pending',
  });
  const { outbound, box, vectors } = kernel;
  const credentials = createCredentials(models, box);
  // A callback posts the run as GET /api/run/{id}/ shows it: the api's own reader.
  const callbacks = {
    ...config.callbacks,
    fetch: outbound.as('callback'),
    runBody: (runId: string) => kernel.reader.get(runId),
    openSecret: (sealed: string) => openCallbackSecret(box, sealed),
  };
  const retriever = createRetriever({
    models,
    vectors,
    secret: credentials.reveal,
    fetch: outbound.as('embedding'),
  }).forNode;
  // The one pool Python nodes of this process run in: spur_sandbox_slots reads it when scraped.
  const pythonSandbox = new PythonSandbox(config.python);
  metrics.sandboxSlots.track(pythonSandbox, (sandbox) => sandbox.slotSamples());
  const { temporal } = config;
  const slots = createWorkerSlots(temporal);
  const queue = {
    taskQueue: temporal.taskQueue,
    workflowIdPrefix: temporal.workflowIdPrefix,
    fairShare: temporal.fairShare,
  };
  if (!temporal.workflowStackTraces) withoutWorkflowStackTraces();
  const options = {
    connection,
    namespace: temporal.namespace,
    // Production (and the test harness) load a prebuilt bundle; dev builds the same one at start.
    // The bundle holds the workflow side of the interceptors (temporal/workflow-bundle.ts).
    workflowBundle: temporal.workflowBundle
      ? { codePath: temporal.workflowBundle }
      : { code: await workflowBundleCode() },
    interceptors: { activity: [workspaceActivities] },
    activities: createActivities({
      models,
      secret: credentials.reveal,
      fetch: outbound,
      values: kernel.values,
      vectors,
      retriever,
      parser: kernel.parser,
      pythonSandbox,
      prices: kernel.prices,
      budgets: kernel.budgets,
      limits: kernel.providerLimits,
      temporal: queue,
      runActionRate: config.runs.bulkActionRate,
      bulkRows: slots.bulkRows,
      launcher: kernel.launcher,
      recordScheduledRun: kernel.recordScheduledRun,
      recordSubworkflowRun: kernel.recordSubworkflowRun,
      retention: kernel.retention,
      runActionSteps: composeRunActionSteps({
        models,
        kernel,
        temporal: () => Context.current().client,
        workflowIdPrefix: config.temporal.workflowIdPrefix,
        definitionLimits: config.limits,
        decisionWaitMs: config.runs.actionWaitMs,
      }),
      callbacks,
      callbackUrl: (claims) => inboundCallbackUrl(config.approvals.publicUrl, kernel.callbackTokens.mint(claims)),
      approvals: {
        settings: config.approvals,
        tokens: kernel.approvalTokens,
        retry: config.callbacks.retry,
        webhookTimeoutMs: config.callbacks.attemptTimeoutMs,
      },
      ...hosted,
    }),
    // On SIGTERM (the SDK's handler) or shutdown(): polling stops at once, running activities get
    // this long; then they are cancelled, their attempt fails and Temporal retries it elsewhere.
    shutdownGraceTime: temporal.shutdownGraceMs,
    // Heartbeats carry cancellation back: sent at most a second after the node beats (Python each
    // second, other nodes every 5 s by default) instead of after 80% of the heartbeat timeout.
    maxHeartbeatThrottleInterval: '1s',
  } satisfies Omit<WorkerOptions, 'taskQueue'>;
  const SpurWorker = workerClass(temporal.activationTimeoutMs);
  const main = await SpurWorker.create({
    ...options,
    taskQueue: temporal.taskQueue,
    tuner: slots.main,
  });
  const bulk = await SpurWorker.create({
    ...options,
    taskQueue: bulkTaskQueue(temporal.taskQueue),
    tuner: slots.bulk,
  });
  return together([main, bulk]);
}

function together(workers: Worker[]): SpurWorkers {
  const shutdown = () => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  };
  return {
    async run() {
      const runs = workers.map((w) => w.run());
      try {
        await Promise.all(runs);
      } catch (err) {
        // One failed: the other stops too, so the process (or its host) sees the failure whole.
        shutdown();
        await Promise.allSettled(runs);
        throw err;
      }
    },
    shutdown,
  };
}

/**
 * The SDK records a stack trace for every promise a workflow creates (a V8 promise hook, for the
 * Web UI's "Stack Trace" of a blocked workflow): about 5 CPU-ms of a 5-node run. Contexts created
 * from here on — the workflow thread and its sandbox, which the worker creates next — capture no
 * frames, which makes that hook cheap; the api's and the activities' errors keep theirs.
 * SPUR_WORKFLOW_STACK_TRACES=true keeps them, to debug a stuck workflow.
 */
function withoutWorkflowStackTraces(): void {
  v8.setFlagsFromString('--stack-trace-limit=0');
}

/**
 * Once per process, before any connection: core's own logs at warnings and errors only, and with
 * metrics on, its own metrics exported at `metricsAt` (src/metrics/sdk-metrics.ts), durations in
 * seconds, under the names the SDK's documentation and Temporal's dashboards use (counters without
 * `_total`: the suffix would double some, `temporal_local_activity_total_total`).
 */
export function installRuntime(metricsAt?: string): void {
  Runtime.install({
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
      ...(metricsAt
        ? {
            metrics: {
              prometheus: { bindAddress: metricsAt, useSecondsForDurations: true },
            },
          }
        : {}),
    },
  });
}
