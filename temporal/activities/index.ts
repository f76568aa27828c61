import type { WorkQueue } from '../../src/contracts/work-share';
import type { Models } from '../../src/db/models';
import { createRunRepository } from '../../src/db/runs/run-repository';
import type { Values } from '../../src/db/values';
import type { PythonSandbox } from '../../src/nodes/code-execution/python-sandbox';
import { createBatchActivities } from './batch.activities';
import { createEvalActivities } from './eval.activities';
import { createChatActivities } from './chat.activities';
import { type CallbackDeliveryDeps, createCallbackActivities } from './callback.activities';
import { type ApprovalDeliveryDeps, createApprovalActivities } from './approval.activities';
import { createAgentActivities } from './agent-step.activity';
import { createNodeActivities } from './execute-node.activity';
import { createPureRegionActivity } from './pure-region.activity';
import { createProjectionActivities } from './projection.activities';
import { createRagActivities } from './rag.activities';
import type { VectorStore } from '../../src/rag/vector-store';
import type { RagRetriever } from '../../src/nodes/types';
import type { RunOutcomes } from '../../src/engine/run-outcomes';
import { createReconcileActivities } from './reconcile.activities';
import { createScheduleActivities } from './schedule.activities';
import { createLimitActivities } from './limit.activities';
import { createCodeParseActivities } from './code-parse.activity';
import type { ProviderLimits } from '../../src/usage/provider-limits';
import type { ScheduledRunRecorder } from '../../src/runs/scheduled-runs';
import type { RunLauncher } from '../../src/runs/launcher';
import type { OutboundFetch } from '../../src/outbound/outbound-fetch';
import type { BoundedParser } from '../../src/parsing/parse-pool';
import type { PriceBook } from '../../src/usage/price-book';
import type { Budgets } from '../../src/usage/budgets';
import type { SpurTracer } from '../../src/telemetry/tracer';

export interface ActivityDeps {
  models: Models;
  secret(name: string): Promise<string | undefined>;
  /** The worker's outbound client: every request a node makes goes through it. */
  fetch: OutboundFetch;
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
  /** How the reconciler starts a run whose api died before starting it (the api's own launcher). */
  launcher: RunLauncher;
  /** A schedule's fire records its run with it (src/runs/scheduled-runs.ts). */
  recordScheduledRun: ScheduledRunRecorder;
  /** Callback delivery: the run's body as the api shows it, the secret's key, the settings. */
  callbacks: CallbackDeliveryDeps;
  /** Approval links: their settings, the key that signs them, the retry policy. */
  approvals: ApprovalDeliveryDeps;
  /** Set when the api runs in this process: it answers blocking runs once their final save is written. */
  outcomes?: RunOutcomes;
  /** Exports run traces (OTLP), when tracing is on. */
  tracer?: SpurTracer;
}

/** Activities get their dependencies by closure (plain factory, no container). */
export function createActivities(deps: ActivityDeps) {
  const runs = createRunRepository(deps.models, deps.values);
  return {
    ...createProjectionActivities(runs, deps.outcomes, deps.tracer),
    ...createNodeActivities(deps),
    ...createPureRegionActivity(deps),
    ...createBatchActivities(deps, runs),
    ...createEvalActivities(deps),
    ...createChatActivities(deps.models),
    ...createAgentActivities(deps),
    ...createRagActivities(deps),
    ...createReconcileActivities(deps),
    ...createCallbackActivities(deps),
    ...createApprovalActivities(deps),
    ...createScheduleActivities(deps),
    ...createLimitActivities(deps),
    ...createCodeParseActivities(deps),
  };
}

export type ProjectionActivities = ReturnType<typeof createProjectionActivities>;
export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
export type BatchActivities = ReturnType<typeof createBatchActivities>;
export type EvalActivities = ReturnType<typeof createEvalActivities>;
export type ChatActivities = ReturnType<typeof createChatActivities>;
export type { RagActivities } from './rag.activities';
export type CallbackActivities = ReturnType<typeof createCallbackActivities>;
export type ApprovalActivities = ReturnType<typeof createApprovalActivities>;
export type ReconcileActivities = ReturnType<typeof createReconcileActivities>;
export type CodeParseActivities = ReturnType<typeof createCodeParseActivities>;
