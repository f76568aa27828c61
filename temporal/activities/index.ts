import type { WorkQueue } from '../../src/contracts/work-share';
import type { Models } from '../../src/db/models';
import { createRunRepository } from '../../src/db/runs/run-repository';
import type { Values } from '../../src/db/values';
import type { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox';
import { createBatchActivities } from './batch.activities';
import { createProviderBatchActivities } from './provider-batch.activities';
import type { BulkPacer } from './bulk-pacer';
import { createEvalActivities } from './eval.activities';
import { createChatActivities } from './chat.activities';
import { type CallbackDeliveryDeps, createCallbackActivities } from './callback.activities';
import { type ApprovalDeliveryDeps, createApprovalActivities } from './approval.activities';
import { createAgentActivities } from './agent-step.activity';
import { createNodeActivities } from './execute-node.activity';
import { createWaitActivities } from './wait.activities';
import { createPureRegionActivity, runPureRegion } from './pure-region.activity';
import { createProjectionActivities } from './projection.activities';
import { createRagActivities } from './rag.activities';
import type { VectorStore } from '../../src/rag/vector-store';
import type { RagRetriever } from '../../src/nodes/types';
import type { RunOutcomes } from '../../src/engine/run-outcomes';
import { createReconcileActivities } from './reconcile.activities';
import { createScheduleActivities } from './schedule.activities';
import { createSubworkflowActivities } from './subworkflow.activities';
import type { SubworkflowRunRecorder } from '../../src/runs/subworkflow-runs';
import { createLimitActivities } from './limit.activities';
import { createCodeParseActivities } from './code-parse.activity';
import { createRetentionActivities } from './retention.activities';
import type { Retention } from '../../src/runs/retention';
import { createRunActionActivities } from './run-action.activities';
import type { RunActionSteps } from '../../src/runs/run-action-steps';
import { createRunActions } from '../../src/db/run-actions';
import type { ProviderLimits } from '../../src/usage/provider-limits';
import type { ScheduledRunRecorder } from '../../src/runs/scheduled-runs';
import type { RunLauncher } from '../../src/runs/launcher';
import type { OutboundClient } from '../../src/outbound/outbound-fetch';
import type { BoundedParser } from '../../src/parsing/parse-pool';
import type { PriceBook } from '../../src/usage/price-book';
import type { Budgets } from '../../src/usage/budgets';
import type { SpurTracer } from '../../src/telemetry/tracer';
import type { InboundCallbackClaims } from '../../src/secrets/inbound-callback-token';

export interface ActivityDeps {
  models: Models;
  secret(name: string): Promise<string | undefined>;
  /** The worker's outbound client: every request a node, an ingest or an approval message makes goes through it. */
  fetch: OutboundClient;
  /** Large values by reference: resolved before a node runs, stored when a node returns one. */
  values: Values;
  /** Knowledge bases: the vector store and retrieval for RetrieverNode. */
  vectors: VectorStore;
  retriever?: RagRetriever;
  /** Documents of an ingest job are parsed and cut on its threads, within the parse limits. */
  parser: BoundedParser;
  pythonSandbox?: PythonSandbox;
  /** Prices model calls as they are made. */
  prices: PriceBook;
  /** Workflow budgets: checked before each model call, spending recorded after. */
  budgets: Budgets;
  /** The fleet-wide limits on model requests, which runs ask for slots of. */
  limits: ProviderLimits;
  /** The queue and workflow-id prefix this worker serves (the reconciler looks for runs there). */
  temporal: WorkQueue;
  /** SPUR_RUN_ACTION_RATE: what a bulk action the reconciler starts is paced at. */
  runActionRate: number;
  /** How many rows of inline batch chunks run at once in this process: fewer while the host is busy (SPUR_BULK_TARGET_CPU). */
  bulkRows: BulkPacer;
  /** How the reconciler starts a run whose api died before starting it (the api's own launcher). */
  launcher: RunLauncher;
  /** A schedule's fire records its run with it (src/runs/scheduled-runs.ts). */
  recordScheduledRun: ScheduledRunRecorder;
  /** A SubworkflowNode records its child run with it (src/runs/subworkflow-runs.ts). */
  recordSubworkflowRun: SubworkflowRunRecorder;
  /** Callback delivery: the run's body as the api shows it, the secret's key, the settings. */
  callbacks: CallbackDeliveryDeps;
  /** Approval links: their settings, the key that signs them, the retry policy. */
  approvals: ApprovalDeliveryDeps;
  /** Deletes finished runs past their workflow's retention (the daily pass). */
  retention: Retention;
  /** A bulk action's per-run steps (src/runs/run-action-kit.ts). */
  runActionSteps: RunActionSteps;
  /** Set when the api runs in this process: it answers blocking runs once their final save is written. */
  outcomes?: RunOutcomes;
  /** Exports run traces (OTLP), when tracing is on. */
  tracer?: SpurTracer;
  /** A WaitForCallbackNode's URL, for `callback_url(…)` in templates; and what its wait records. */
  callbackUrl?: (claims: InboundCallbackClaims) => string;
}

/** Activities get their dependencies by closure (plain factory, no container). */
export function createActivities(deps: ActivityDeps) {
  const runs = createRunRepository(deps.models, deps.values);
  // Nodes run in node, region, batch, eval and agent activities: their requests count as the node's.
  const nodes = { ...deps, fetch: deps.fetch.as('node') };
  const projection = createProjectionActivities(runs, deps.outcomes, deps.tracer);
  return {
    ...projection,
    ...createNodeActivities(nodes, {
      saveProgress: projection.saveProgress,
      runRegion: (input) => runPureRegion(nodes, input),
    }),
    ...createWaitActivities(deps),
    ...createPureRegionActivity(nodes, projection.saveProgress),
    ...createBatchActivities(nodes, runs, deps.bulkRows),
    ...createProviderBatchActivities(nodes, runs.events),
    ...createEvalActivities(nodes),
    ...createChatActivities(deps.models),
    ...createAgentActivities(nodes),
    ...createRagActivities({ ...deps, fetch: deps.fetch.as('embedding') }),
    ...createReconcileActivities(deps),
    ...createCallbackActivities(deps),
    ...createApprovalActivities({ ...deps, fetch: deps.fetch.as('approval') }),
    ...createScheduleActivities(deps),
    ...createSubworkflowActivities(deps),
    ...createLimitActivities(deps),
    ...createCodeParseActivities(deps),
    ...createRetentionActivities(deps.retention),
    ...createRunActionActivities({ runActions: createRunActions(deps.models), runActionSteps: deps.runActionSteps }),
  };
}

export type ProjectionActivities = ReturnType<typeof createProjectionActivities>;
export type { WaitActivities } from './wait.activities';
export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
export type { SubworkflowActivities } from './subworkflow.activities';
export type BatchActivities = ReturnType<typeof createBatchActivities>;
export type ProviderBatchActivities = ReturnType<typeof createProviderBatchActivities>;
export type EvalActivities = ReturnType<typeof createEvalActivities>;
export type ChatActivities = ReturnType<typeof createChatActivities>;
export type { RagActivities } from './rag.activities';
export type CallbackActivities = ReturnType<typeof createCallbackActivities>;
export type ApprovalActivities = ReturnType<typeof createApprovalActivities>;
export type ReconcileActivities = ReturnType<typeof createReconcileActivities>;
export type CodeParseActivities = ReturnType<typeof createCodeParseActivities>;
export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
export type { RunActionActivities } from './run-action.activities';
