import { workspaceAttribute, workspaceShare } from '../db/workspace-scope';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { createDatasetReader } from '../db/dataset-reader';
import type { IdempotencyKeys } from '../db/idempotency-keys';
import { fromJsonText } from '../db/json-text';
import { apiKeyLabel } from '../db/usage-ledger';
import type { Models, RunDoc } from '../db/models';
import type { RunRepository } from '../db/runs/run-repository';
import type { CallbackEvent } from '../engine/callback-events';
import type { RunDefinition } from '../engine/run-contract';
import { OPEN_RUN_STATUSES, type RunStatus } from '../engine/statuses';
import { SpurError } from '../errors';
import type { Config } from '../config/settings';
import type { BatchRunInput } from '../contracts/batch-contract';
import type { ChatTurnStart, RunRerun, SpurRunInput } from '../contracts/run-contract';
import { SpurRunStatus, SpurRunType, SpurStartedBy, SpurWorkflowId } from '../contracts/search-attributes';
import { WorkflowType, runWorkflowId } from '../contracts/workflow-names';
import { batchMode, inputColumns, modelsOf } from './batch-plan';
import { createProviderLimits } from '../usage/provider-limits';
import { budgetMayPause } from '../usage/budgets';
import { checkRunnable, resolveRunInputs, storedRunDefinition } from './inputs';
import { runTaskIds, topLevelNodes } from './opening-tasks';
import { rerunExtras, rerunSourceOf } from './rerun-launch';
import { runTraceOf } from '../contracts/trace-ids';
import type { WorkClass } from '../contracts/work-share';

export interface RunLauncherDeps {
  models: Models;
  runRecords: Pick<RunRepository, 'failWithoutWorkflow' | 'tasksOf' | 'discardUnstarted'>;
  keys: Pick<IdempotencyKeys, 'names'>;
  /** The client to start with: the api's own, or the one of the reconciler's activity. */
  temporal: () => Client;
  taskQueue: string;
  workflowIdPrefix: string;
  /** Priority and fairness keys on its starts (SPUR_FAIR_SHARE, src/contracts/work-share.ts). */
  fairShare: boolean;
  /** Request eager workflow start: only with a client over a NativeConnection shared with a worker. */
  eagerStart: boolean;
  /** SPUR_RUN_HISTORY_EVENTS: a run's workflow continues as new past this many history events. */
  runHistoryEvents?: number;
  batch: Pick<Config['runs'], 'batchHistoryEvents' | 'batchChunkRows' | 'batchRowMode' | 'providerBatchPollMaxSeconds'>;
  /**
   * What Temporal refusing the start does to the run. The api fails it: its client is answered 503
   * and may send the request again, so the refused run must not also start later. The reconciler
   * leaves it PENDING and tries again on its next pass.
   */
  whenRefused: 'fail-run' | 'leave-pending';
}

/** What the api already holds when it launches a run it has just recorded (the reconciler reads it all). */
export interface KnownAtLaunch {
  workflowName: string;
  definition: RunDefinition;
  /** The InputNode's input when it differs from the stored one (a chatbot's history filled in, a rerun's start). */
  inputNodeInput?: Record<string, unknown>;
  chat?: ChatTurnStart;
  rerun?: RunRerun;
}

export type LaunchResult =
  /** Its workflow runs (or had already been started by another launch of the same run). */
  | { outcome: 'started' }
  /** A keyed run whose key names another run: no client was answered with it, so it is removed. */
  | { outcome: 'discarded' }
  /** It can never start (its version or dataset is gone, its stored plan no longer holds): now FAILED, saying why. */
  | { outcome: 'failed'; message: string };

export interface WorkflowStart {
  type: (typeof WorkflowType)[keyof typeof WorkflowType];
  args: unknown[];
  summary: string;
  /** Its SpurRunStatus at the start (a run's workflow says so in its input: SpurRunInput.listedAs). */
  listedAs: RunStatus;
}

/** A run's workflow as its launch would start it: for a caller that starts it as a child workflow instead. */
export type LaunchPlan = { outcome: 'ready'; start: WorkflowStart } | Exclude<LaunchResult, { outcome: 'started' }>;

/**
 * Starts the Temporal workflow of a run that is recorded (PENDING): the one way a run starts,
 * whoever starts it — the api right after recording it, keyed recovery for a request that died
 * before its start, the reconciler for an api that died. Everything the workflow needs is on the
 * record (its pinned version, stored inputs, rerun plan, batch dataset), so each of them starts
 * the same run; its fixed workflow id makes a second start join the first.
 */
export function createRunLauncher(deps: RunLauncherDeps) {
  const datasets = createDatasetReader(deps.models);
  const limits = createProviderLimits(deps.models);

  async function launch(run: RunDoc, known?: KnownAtLaunch): Promise<LaunchResult> {
    const planned = await plan(run, known);
    if (planned.outcome !== 'ready') return planned;
    await startWorkflow(run, planned.start);
    return { outcome: 'started' };
  }

  async function plan(run: RunDoc, known?: KnownAtLaunch): Promise<LaunchPlan> {
    // A keyed run starts only if its key names it; otherwise it lost the key to another request.
    if (run.idempotency_key && !(await deps.keys.names(run.idempotency_key, run._id))) {
      await deps.runRecords.discardUnstarted(run._id);
      return { outcome: 'discarded' };
    }
    try {
      const pinned = known ?? (await loadPinned(run));
      if (!pinned) return failed(run, 'Its workflow version is gone');
      const start = run.input_dataset_id ? await batchStart(run, pinned) : await runStart(run, pinned, known);
      return { outcome: 'ready', start };
    } catch (err) {
      // Stored inputs or a plan the definition no longer accepts, a dataset deleted: no retry changes that.
      if (err instanceof SpurError && (err.kind === 'invalid' || err.kind === 'not_found'))
        return failed(run, err.message);
      throw err;
    }
  }

  async function failed(run: RunDoc, reason: string): Promise<{ outcome: 'failed'; message: string }> {
    const message = `The run could not start: ${reason}`;
    await deps.runRecords.failWithoutWorkflow(run._id, OPEN_RUN_STATUSES, message);
    return { outcome: 'failed', message };
  }

  async function loadPinned(run: RunDoc): Promise<KnownAtLaunch | null> {
    const version = run.workflow_version_id
      ? await deps.models.WorkflowVersion.findById(run.workflow_version_id, { definition: 1, name: 1 }).lean<{
          definition: string;
          name: string;
        }>()
      : null;
    if (!version) return null;
    const definition = storedRunDefinition(version.definition);
    return { workflowName: version.name, definition };
  }

  async function runStart(run: RunDoc, pinned: KnownAtLaunch, known?: KnownAtLaunch): Promise<WorkflowStart> {
    const { definition } = pinned;
    // A rerun's plan comes from its record and the original's tasks (the api computed it already).
    const source = rerunSourceOf(run);
    const rerun =
      known?.rerun || !source || !run.rerun_of
        ? null
        : rerunExtras(definition, source, await deps.runRecords.tasksOf(run.rerun_of));
    const input: SpurRunInput = {
      runId: run._id,
      workflowId: run.workflow_id,
      definition,
      // The stored inputs keep large values by reference, as the workflow wants them.
      inputNodeInput:
        known?.inputNodeInput ??
        rerun?.inputNodeInput ??
        resolveRunInputs(definition, fromJsonText<Record<string, Record<string, unknown>>>(run.initial_inputs) ?? {}),
      taskIds: runTaskIds(run.seq, topLevelNodes(definition)),
      ...(known?.chat ? { chat: known.chat } : {}),
      ...(deps.runHistoryEvents !== undefined ? { historyEventsLimit: deps.runHistoryEvents } : {}),
      ...(deps.workflowIdPrefix ? { workflowIdPrefix: deps.workflowIdPrefix } : {}),
      ...callbackOf(run),
      ...(known?.rerun ? { rerun: known.rerun } : rerun ? { rerun: rerun.rerun } : {}),
      // From the record, so every launch of the run (the api's, the reconciler's) traces it alike.
      trace: runTraceOf(run._id, run.trace_parent, run.start_time),
      recordedAs: { apiKey: apiKeyLabel(run), startTime: run.start_time.toISOString() },
      listedAs: 'RUNNING',
      callsCarry: true,
      stopsWhenRefused: true,
      localPython: true,
      endsCarried: true,
      regularCallsCarry: true,
    };
    return {
      type: WorkflowType.spurRun,
      listedAs: 'RUNNING',
      args: [input],
      summary: `${pinned.workflowName} (${run.workflow_id}) run ${run._id}`,
    };
  }

  async function batchStart(run: RunDoc, pinned: KnownAtLaunch): Promise<WorkflowStart> {
    const { definition } = pinned;
    const inputNode = checkRunnable(definition);
    const dataset = await datasets.getDataset(run.input_dataset_id as string);
    if (!run.output_file_id || !run.workflow_version_id)
      throw new SpurError('invalid', 'BATCH_RECORD_INCOMPLETE', 'Its record names no output file or version');
    const input: BatchRunInput = {
      parentRunId: run._id,
      parentSeq: run.seq,
      workflowIdPrefix: deps.workflowIdPrefix,
      workflowId: run.workflow_id,
      workflowVersionId: run.workflow_version_id,
      datasetId: dataset.id,
      outputFileId: run.output_file_id,
      definition,
      inputNodeId: inputNode.id,
      columns: inputColumns(inputNode, dataset.columns),
      // The rows recorded with the batch: rows appended to the dataset later are not in it.
      rowCount: run.rows_total ?? dataset.row_count,
      miniBatchSize: run.mini_batch_size ?? 1,
      // Rows under a fleet-wide limit wait for slots, and rows a budget may pause wait for a person,
      // in workflows of their own, never inside a chunk activity.
      mode:
        (await limits.anyOn(modelsOf(definition))) || (await budgetMayPause(deps.models, run.workflow_id))
          ? 'child'
          : batchMode(definition, deps.batch.batchRowMode),
      historyEventsLimit: deps.batch.batchHistoryEvents,
      chunkRows: deps.batch.batchChunkRows,
      cursor: { next: 0, ok: 0, failed: 0 },
      ...(run.llm_mode === 'provider_batch'
        ? { llmMode: 'provider_batch', providerBatchPollMaxSeconds: deps.batch.providerBatchPollMaxSeconds }
        : {}),
      ...callbackOf(run),
      trace: runTraceOf(run._id, run.trace_parent, run.start_time),
    };
    return {
      type: WorkflowType.spurBatchRun,
      // Its workflow lists it RUNNING itself once it begins.
      listedAs: 'PENDING',
      args: [input],
      summary: `${pinned.workflowName} (${run.workflow_id}) batch ${run._id} over ${dataset.name} (${dataset.id}), ${input.rowCount} rows`,
    };
  }

  /** Only the events: the callback's url and secret stay on the record, out of Temporal's history. */
  function callbackOf(run: RunDoc): Pick<SpurRunInput, 'callback'> {
    return run.callback?.events.length
      ? { callback: { events: run.callback.events as CallbackEvent[], workflowIdPrefix: deps.workflowIdPrefix } }
      : {};
  }

  async function startWorkflow(run: RunDoc, start: WorkflowStart): Promise<void> {
    try {
      await deps.temporal().workflow.start(start.type, {
        workflowId: runWorkflowId(run._id, deps.workflowIdPrefix),
        args: start.args,
        // A second start of a run (an idempotent replay, the reconciler) joins the running workflow
        // and never starts a closed run again: at most one execution per run id.
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        staticSummary: start.summary,
        // The first workflow task runs in this process when it hosts a worker with a free slot.
        requestEagerStart: deps.eagerStart,
        typedSearchAttributes: [
          { key: SpurWorkflowId, value: run.workflow_id },
          { key: SpurRunType, value: run.run_type },
          { key: SpurRunStatus, value: start.listedAs },
          ...(run.started_by_name ? [{ key: SpurStartedBy, value: run.started_by_name }] : []),
          ...workspaceAttribute(run.workspace_id),
        ],
        ...workspaceShare(workClassOf(start.type, run.run_type), deps, run.workspace_id),
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      // The client's own message is generic ("Failed to start Workflow"); the cause says why
      // (e.g. a server whose search attributes were never registered).
      const cause = (err as { cause?: { message?: unknown } }).cause?.message;
      const message = `Could not start the run on Temporal: ${(err as Error).message}${typeof cause === 'string' ? `: ${cause}` : ''}`;
      if (deps.whenRefused === 'fail-run')
        await deps.runRecords.failWithoutWorkflow(run._id, OPEN_RUN_STATUSES, message);
      throw new SpurError('unavailable', 'TEMPORAL_UNAVAILABLE', message);
    }
  }

  return { launch, plan };
}

export type RunLauncher = ReturnType<typeof createRunLauncher>;

/** A batch's rows are bulk work, a schedule's fire nobody waits on; a run someone started is interactive. */
function workClassOf(type: WorkflowStart['type'], runType: string): WorkClass {
  if (type === WorkflowType.spurBatchRun) return 'bulk';
  return runType === 'scheduled' ? 'scheduled' : 'interactive';
}
