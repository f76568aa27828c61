import path from 'node:path';
import v8 from 'node:v8';
import { Context } from '@temporalio/activity';
import { type NativeConnection, Runtime, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import type { Config } from '../src/config/settings';
import type { Models } from '../src/db/models';
import { composeKernel } from '../src/kernel';
import { PythonSandbox } from '../src/nodes/code-execution/python-sandbox';
import { createCredentials } from '../src/secrets/credentials';
import { loadSecretKey } from '../src/secrets/secret-key';
import { createRetriever } from '../src/rag/retrieval';
import { createActivities } from './activities';
import { WORKSPACE_WORKFLOW_INTERCEPTOR, workspaceActivities } from './workspace-activities';
import { openCallbackSecret } from '../src/secrets/callback-secret';
import type { RunOutcomes } from '../src/engine/run-outcomes';
import type { SpurTracer } from '../src/telemetry/tracer';

/**
 * A worker of Spur's task queue: every workflow and activity, whichever process hosts it (the
 * worker process, or the api in the single-process topology). All workers of a queue must be equal.
 * `hosted.outcomes`: the api in this process answers blocking runs from their final saves.
 * `hosted.tracer`: where run traces go (tracing on); its owner flushes it once the worker stops.
 */
export function createSpurWorker(
  connection: NativeConnection,
  config: Readonly<Config>,
  models: Models,
  hosted: { outcomes?: RunOutcomes; tracer?: SpurTracer } = {},
): Promise<Worker> {
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
    fetch: outbound,
    runBody: (runId: string) => kernel.reader.get(runId),
    openSecret: (sealed: string) => openCallbackSecret(box, sealed),
  };
  const retriever = createRetriever({ models, vectors, secret: credentials.reveal, fetch: outbound }).forNode;
  const queue = {
    taskQueue: config.temporal.taskQueue,
    workflowIdPrefix: config.temporal.workflowIdPrefix,
    fairShare: config.temporal.fairShare,
  };
  if (!config.temporal.workflowStackTraces) withoutWorkflowStackTraces();
  return Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    // Production (and the test harness) load a prebuilt bundle; dev bundles from source at start.
    ...(config.temporal.workflowBundle
      ? { workflowBundle: { codePath: config.temporal.workflowBundle } }
      : { workflowsPath: path.join(__dirname, 'workflows') }),
    // A prebuilt bundle holds the workflow side already (scripts/build-bundle.ts).
    interceptors: { activity: [workspaceActivities], workflowModules: [WORKSPACE_WORKFLOW_INTERCEPTOR] },
    activities: createActivities({
      models,
      secret: credentials.reveal,
      fetch: outbound,
      values: kernel.values,
      vectors,
      retriever,
      parser: kernel.parser,
      pythonSandbox: new PythonSandbox(config.python),
      prices: kernel.prices,
      budgets: kernel.budgets,
      limits: kernel.providerLimits,
      temporal: queue,
      launcher: kernel.launcher,
      recordScheduledRun: kernel.recordScheduledRun,
      callbacks,
      approvals: {
        settings: config.approvals,
        tokens: kernel.approvalTokens,
        retry: config.callbacks.retry,
        webhookTimeoutMs: config.callbacks.attemptTimeoutMs,
      },
      ...hosted,
    }),
    // Beyond this many, activities wait in Temporal's queue (where they cost nothing) for a slot.
    maxConcurrentActivityTaskExecutions: config.temporal.maxActivities,
    shutdownGraceTime: '10s',
    // Heartbeats carry cancellation back: at most a second's delay, so a cancelled run's Python
    // or LLM call stops within a second or two instead of after 80% of the heartbeat timeout.
    maxHeartbeatThrottleInterval: '1s',
  });
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

/** Once per process, before any connection: core's own logs at warnings and errors only. */
export function installRuntime(): void {
  Runtime.install({
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } },
  });
}
