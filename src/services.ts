import { createInboundCallbackService } from './modules/inbound-callbacks/inbound-callbacks.service';
import { createInboundCallbacks } from './db/inbound-callbacks';
import { createWorkspaceStore } from './db/workspaces';
import { createWorkspaceMembers } from './db/workspace-members';
import { createWorkspaceService } from './modules/access/workspaces.service';
import type { Client } from '@temporalio/client';
import type { RunOutcomes } from './engine/run-outcomes';
import type { Config } from './config/settings';
import { createMcpTools } from './db/mcp-tools';
import { createWorkflowTools } from './modules/mcp/workflow-tools.service';
import { breakerSwitcher, limitChangeNotifier } from './usage/limit-changes';
import { createUsageLedger } from './db/usage-ledger';
import type { Models } from './db/models';
import { composeKernel } from './kernel';
import { createPauseService } from './modules/pauses/pauses.service';
import { createRunCancel } from './runs/run-cancel';
import { createWorkflowRunsStop } from './runs/workflow-runs-stop';
import { createApprovalLinks } from './modules/pauses/approval-links.service';
import { createBatchRuns } from './runs/batch-runs';
import { createClientRuns } from './runs/client-runs';
import { createPartialRuns } from './modules/runs/partial-runs';
import { createReruns } from './runs/reruns';
import { createOutcomeWait } from './runs/outcome-wait';
import { createRunEventHub } from './modules/runs/run-event-hub';
import { eventsWithValues } from './modules/runs/run-event-values';
import { createStreamSlots } from './modules/runs/stream-slots';
import type { Logger } from './logger';
import { createEnvService } from './modules/env-mgmt/env-mgmt.service';
import { createDatasetService } from './modules/datasets/datasets.service';
import { createOutputFileService } from './modules/output-files/output-files.service';
import { createRagService } from './modules/rag/rag.service';
import { createTestFileService } from './modules/files/test-files.service';
import { createStoredFileService } from './modules/files/stored-files.service';
import { createAiAssist } from './modules/ai/ai-assist';
import { createVersionService } from './modules/workflows/versions.service';
import { createWorkflowService } from './modules/workflows/workflows.service';
import { createSubworkflowLinks } from './modules/workflows/subworkflow-links';
import { createCodeConvertService } from './modules/code-convert/code-convert.service';
import { createCodeParser } from './modules/code-convert/code-parser';
import { createSessionTurns } from './db/session-turns';
import { createChatMemory } from './runs/chat-memory';
import { createSessionService } from './modules/sessions/sessions.service';
import { createUserService } from './modules/users/users.service';
import { createChatCompletionService } from './modules/openai-compat/chat-completions.service';
import { createCallbackService } from './modules/callbacks/callbacks.service';
import { createBrowserSessionStore } from './db/browser-sessions';
import { createOidcSignInStore } from './db/oidc-sign-ins';
import { createAccessKeyStore } from './db/access-keys';
import { createAccessUserStore } from './db/access-users';
import { createAuditTrail } from './db/audit-trail';
import { createAccessService } from './modules/access/access.service';
import { createIdempotency } from './modules/runs/idempotency';
import { createScheduleService } from './modules/schedules/schedules.service';
import { createTemporalSchedules } from './modules/schedules/temporal-schedules';
import { createWebhookTriggerStore } from './db/webhook-triggers';
import { createWebhookHits } from './db/webhook-hits';
import { createWebhookTriggerService } from './modules/webhooks/webhook-triggers.service';
import { createHookDelivery } from './modules/webhooks/hook-delivery';
import { createHookHold } from './modules/webhooks/hook-hold';
import { createHeldRelease } from './modules/webhooks/held-release';
import { createWorkflowPauseService } from './modules/workflows/workflow-pause.service';
import { createHeldDeliveries } from './db/held-deliveries';
import { createEvalRecords } from './db/eval-records';
import { createSuiteService } from './modules/evals/suites.service';
import { createSuitesFromRuns } from './modules/evals/suites-from-runs';
import { createEvalRecorder } from './modules/evals/eval-recorder';
import { createEvalService } from './modules/evals/evals.service';
import { createRunActionService } from './modules/run-actions/run-actions.service';

export interface ServiceDeps {
  models: Models;
  secretKey: Buffer;
  temporal: Client;
  config: Pick<
    Config,
    | 'temporal'
    | 'runs'
    | 'datasets'
    | 'parsing'
    | 'values'
    | 'limits'
    | 'rag'
    | 'outbound'
    | 'idempotency'
    | 'webhooks'
    | 'inboundCallbacks'
  > &
    Partial<Pick<Config, 'runEvents'>>;
  /** Start runs with eager workflow start (the client shares a NativeConnection with a worker here). */
  eagerStart?: boolean;
  /** Aborted when the api starts draining for shutdown (processes/api.ts). */
  stopping?: AbortSignal;
  logger?: Logger;
  /** A worker in this process publishes final saves: blocking runs answer from them. */
  outcomes?: RunOutcomes;
}

/** The api's business services, wired to one set of models and one Temporal client. */
export function createServices({
  models,
  secretKey,
  temporal,
  config,
  eagerStart = false,
  stopping,
  logger,
  outcomes,
}: ServiceDeps) {
  // Temporal refusing a start fails the run here: the client is answered 503 and may send it again.
  const kernel = composeKernel({
    models,
    config,
    secretKey,
    temporal: () => temporal,
    eagerStart,
    whenRefused: 'fail-run',
  });
  const { values, runRecords, reader, recorder, launcher, keys, box, outbound, parser, prices } = kernel;
  const workflows = createWorkflowService(
    models,
    createSubworkflowLinks({ models, versions: kernel.versions, maxDepth: config.limits.subworkflowMaxDepth }),
  );
  const versions = createVersionService(models, kernel.versions);
  const turns = createSessionTurns(models);
  // A deleted user takes its sessions along: the two services know each other through this call.
  const users = createUserService(models, (userId) => sessions.removeOfUser(userId));
  const sessions = createSessionService({ models, turns, users, workflows });
  const callbacks = createCallbackService({
    models,
    box,
    allowPrivate: config.outbound.allowPrivate,
    allowHosts: config.outbound.allowHosts,
  });
  const wait = createOutcomeWait({
    runRecords,
    temporal,
    workflowIdPrefix: config.temporal.workflowIdPrefix,
    blockingWaitMs: config.runs.blockingWaitMs,
    ...(stopping ? { stopping } : {}),
  });
  const recording = { models, workflows, recorder, launcher, reader, definitionLimits: config.limits };
  const clientRuns = createClientRuns({
    ...recording,
    wait,
    chatMemory: createChatMemory(turns),
    prepareCallback: callbacks.prepare,
    ...(outcomes ? { outcomes } : {}),
  });
  const env = createEnvService(models, box);
  const runEvents = createRunEventHub(eventsWithValues(runRecords.events, values), {
    pollMs: 200,
    keepAliveMs: 15_000,
    ...config.runEvents,
    runExists: async (id) => (await runRecords.statusOf(id)) !== null,
    deltas: runRecords.deltas,
    ...(logger ? { logger } : {}),
  });
  const idempotency = createIdempotency({ keys, runRecords, ttlMs: config.idempotency.ttlMs });
  // A keyed request whose first attempt died before its run started: started now, as the reconciler would.
  const recoverRun = async (runId: string) => {
    const run = await runRecords.recordOf(runId);
    if (run?.status === 'PENDING') await launcher.launch(run);
    return reader.get(runId);
  };
  const webhookStore = createWebhookTriggerStore(models);
  const heldDeliveries = createHeldDeliveries(models);
  const workflowPauses = createWorkflowPauseService({
    workflows,
    pauses: kernel.pauses,
    held: heldDeliveries,
    releaseHeld: createHeldRelease({
      held: heldDeliveries,
      keys,
      runRecords,
      clientRuns,
      launcher,
      recorder,
      workflows,
      ttlMs: config.idempotency.ttlMs,
    }),
  });
  // Streams end when the api stops draining: their clients reconnect elsewhere with Last-Event-ID.
  stopping?.addEventListener('abort', () => runEvents.close());
  const schedules = createScheduleService({
    models,
    workflows,
    versions,
    temporal: createTemporalSchedules(() => temporal, config.temporal),
    recordScheduledRun: kernel.recordScheduledRun,
    launcher,
    reader,
    definitionLimits: config.limits,
    callbacks,
  });
  const mcpTools = createMcpTools(models);
  const accessUsers = createAccessUserStore(models);
  const workspaceMembers = createWorkspaceMembers(models, accessUsers);
  const pauses = createPauseService({
    models,
    values,
    runRecords,
    reader,
    versionById: versions.byId,
    temporal,
    workflowIdPrefix: config.temporal.workflowIdPrefix,
    actionWaitMs: config.runs.actionWaitMs,
    users: accessUsers,
    members: workspaceMembers,
  });
  const datasets = createDatasetService({ models, runs: reader, limits: config.datasets, parser });
  const evalRecords = createEvalRecords(models);
  const evalSuites = createSuiteService(models, evalRecords);
  const evals = createEvalService({
    models,
    records: evalRecords,
    suites: evalSuites,
    workflows,
    versions,
    temporal,
    workflowIdPrefix: config.temporal.workflowIdPrefix,
    recorder: createEvalRecorder({
      models,
      records: evalRecords,
      runRecords,
      recorder,
      launcher,
      temporal,
      taskQueue: config.temporal.taskQueue,
      workflowIdPrefix: config.temporal.workflowIdPrefix,
      fairShare: config.temporal.fairShare,
      definitionLimits: config.limits,
      pauses: kernel.pauses,
    }),
  });
  const browserSessionStore = createBrowserSessionStore(models);
  const accessKeys = createAccessKeyStore(models);
  const workspaces = createWorkspaceStore(models);
  return {
    evalSuites,
    evals,
    mcpTools,
    workflowTools: createWorkflowTools({ tools: mcpTools, workflows, clientRuns, reader, values }),
    prices,
    usageLedger: createUsageLedger(models),
    providerLimits: kernel.providerLimits,
    budgets: kernel.budgets,
    eraser: kernel.eraser,
    retention: kernel.retention,
    notifyLimitChanges: limitChangeNotifier(() => temporal, config.temporal.workflowIdPrefix),
    switchBreaker: breakerSwitcher(() => temporal, config.temporal),
    schedules,
    runEvents,
    streamSlots: createStreamSlots(config.runEvents?.streams ?? { max: 1000, perClient: 20 }),
    values,
    runRecords,
    stopOpenRunsOf: createWorkflowRunsStop({
      runRecords,
      cancelRun: createRunCancel({
        runRecords,
        temporal: () => temporal,
        workflowIdPrefix: config.temporal.workflowIdPrefix,
      }),
      temporal: () => temporal,
      workflowIdPrefix: config.temporal.workflowIdPrefix,
    }),
    workflows,
    workflowPauses,
    versions,
    runs: reader,
    callbacks,
    clientRuns,
    partialRuns: createPartialRuns({
      values,
      workflows,
      wait,
      temporal,
      taskQueue: config.temporal.taskQueue,
      workflowIdPrefix: config.temporal.workflowIdPrefix,
      fairShare: config.temporal.fairShare,
      eagerStart,
      definitionLimits: config.limits,
      pauses: kernel.pauses,
    }),
    reruns: createReruns({ ...recording, runRecords, versions }),
    runActions: createRunActionService({
      models,
      temporal,
      config: config.temporal,
      rate: config.runs.bulkActionRate,
      deciders: pauses.deciders,
    }),
    recordBatch: createBatchRuns({ ...recording, prepareCallback: callbacks.prepare }),
    pauses,
    // Approval links decide through the pauses' own Update; their tokens are checked with the workers' key.
    approvalLinks: createApprovalLinks({
      models,
      tokens: kernel.approvalTokens,
      pauses,
      deciders: pauses.deciders,
      versionById: versions.byId,
      runRecords,
      values,
    }),
    // Workflow code runs on a worker's sandbox, started through Temporal like a partial run.
    codeConvert: createCodeConvertService({
      workflows,
      runWorkflowCode: createCodeParser({
        temporal,
        taskQueue: config.temporal.taskQueue,
        workflowIdPrefix: config.temporal.workflowIdPrefix,
        fairShare: config.temporal.fairShare,
        eagerStart,
        waitSeconds: config.runs.codeParseWaitSeconds,
      }),
      definitionLimits: config.limits,
    }),
    testFiles: createTestFileService(models),
    storedFiles: createStoredFileService(models),
    env,
    aiAssist: createAiAssist(env, outbound.as('assist')),
    datasets,
    suitesFromRuns: createSuitesFromRuns({
      runs: runRecords,
      values,
      datasets,
      suites: evalSuites,
      outputVariables: (id) => workflows.outputVariables(id),
    }),
    outputFiles: createOutputFileService(models, runRecords),
    users,
    sessions,
    chatCompletions: createChatCompletionService({ workflows, clientRuns, reader }),
    browserSessionStore,
    oidcSignIns: createOidcSignInStore(models),
    accessUsers,
    accessKeys,
    workspaceMembers,
    access: createAccessService({
      users: accessUsers,
      keys: accessKeys,
      sessions: browserSessionStore,
      workspaces,
      members: workspaceMembers,
    }),
    workspaces: createWorkspaceService({
      models,
      store: workspaces,
      members: workspaceMembers,
      users: accessUsers,
      keys: accessKeys,
    }),
    // Chained under the server's secret key: every api process appends to one chain.
    auditTrail: createAuditTrail(models, secretKey),
    idempotency,
    recoverRun,
    webhookTriggers: createWebhookTriggerService({
      models,
      store: webhookStore,
      workflows,
      box,
      callbacks,
      apiPrefix: '/api',
    }),
    deliverCallback: createInboundCallbackService({
      tokens: kernel.callbackTokens,
      callbacks: createInboundCallbacks(models),
      runOf: (runId) => kernel.runRecords.recordOf(runId),
      versionOf: (versionId) => kernel.versions.byId(versionId),
      temporal: () => temporal,
      workflowIdPrefix: config.temporal.workflowIdPrefix,
      maxBodyBytes: config.inboundCallbacks.maxBodyBytes,
    }),
    deliverHook: createHookDelivery({
      store: webhookStore,
      hits: createWebhookHits(models),
      box,
      workflows,
      clientRuns,
      reader,
      idempotency,
      recoverRun,
      pauses: kernel.pauses,
      hold: createHookHold(heldDeliveries, config.webhooks.maxHeldPerWorkflow),
    }),
    rag: createRagService({
      models,
      temporal,
      taskQueue: config.temporal.taskQueue,
      workflowIdPrefix: config.temporal.workflowIdPrefix,
      fairShare: config.temporal.fairShare,
      vectors: kernel.vectors,
      secret: env.reveal,
      fetch: outbound.as('embedding'),
      parser,
    }),
    parser,
  };
}

export type Services = ReturnType<typeof createServices>;
