import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { taskIdFor } from '../db/ids';
import { fromJsonText } from '../db/json-text';
import type { Models, RunDoc } from '../db/models';
import type { CallbackEvent } from '../engine/callback-events';
import type { RunDefinition } from '../engine/run-contract';
import type { ChatTurnStart, RunRerun, SpurRunInput } from '../../temporal/shared/run-contract';
import { createRunProjection } from '../db/run-projection';
import { createRunEvents } from '../db/run-events';
import { rerunExtras, rerunSourceOf } from './rerun-launch';
import { SpurRunStatus, SpurRunType, SpurWorkflowId } from '../../temporal/shared/search-attributes';
import { WorkflowType, runWorkflowId } from '../../temporal/shared/workflow-names';
import type { WorkflowDefinition } from '../definitions/definition.schema';
import { resolveRunInputs, toRunDefinition } from './inputs';

export interface RunLaunchDeps {
  models: Models;
  temporal: Client;
  taskQueue: string;
  workflowIdPrefix: string;
  /** Request eager workflow start: only with a client over a NativeConnection shared with a worker. */
  eagerStart: boolean;
}

export interface RunWorkflowStart {
  type: (typeof WorkflowType)[keyof typeof WorkflowType];
  args: unknown[];
  summary: string;
  /** The Spur workflow (`S<n>`) the run belongs to, for the search attributes. */
  workflowId: string;
  runType: string;
}

/** What the api adds when it launches a run it has just stored (the reconciler launches with none). */
export interface LaunchExtras {
  /** The InputNode's input when it differs from the stored one (a chatbot's history filled in). */
  inputNodeInput?: Record<string, unknown>;
  chat?: ChatTurnStart;
  historyEventsLimit?: number;
  /** A rerun's reused outcomes and start node (rerun-launch.ts). */
  rerun?: RunRerun;
}

/**
 * Starts the `spurRun` workflow of a run record that exists: everything it needs (the pinned
 * definition, the stored initial inputs, the run's seq for task ids) is on the record and its
 * version. The api calls it right after the insert; the reconciler calls it for a run whose api
 * died before it could.
 */
export async function launchRun(
  deps: RunLaunchDeps,
  run: RunDoc,
  workflow: { _id: string; name: string },
  definition: RunDefinition,
  extra: LaunchExtras = {},
): Promise<void> {
  const topLevel = definition.nodes.filter((n) => n.parent_id === null);
  const input: SpurRunInput = {
    runId: run._id,
    workflowId: workflow._id,
    definition,
    // The stored inputs keep large values by reference, as the workflow wants them.
    inputNodeInput:
      extra.inputNodeInput ??
      resolveRunInputs(definition, fromJsonText<Record<string, Record<string, unknown>>>(run.initial_inputs) ?? {}),
    taskIds: Object.fromEntries(topLevel.map((n, i) => [n.id, taskIdFor(run.seq, i, topLevel.length)])),
    ...(extra.chat ? { chat: extra.chat } : {}),
    ...(extra.historyEventsLimit !== undefined ? { historyEventsLimit: extra.historyEventsLimit } : {}),
    // Only the events: the callback's url and secret stay on the record, out of Temporal's history.
    ...(run.callback?.events.length
      ? { callback: { events: run.callback.events as CallbackEvent[], workflowIdPrefix: deps.workflowIdPrefix } }
      : {}),
    ...(extra.rerun ? { rerun: extra.rerun } : {}),
  };
  await startWorkflowOf(deps, run._id, {
    type: WorkflowType.spurRun,
    args: [input],
    summary: `${workflow.name} (${workflow._id}) run ${run._id}`,
    workflowId: workflow._id,
    runType: run.run_type,
  });
}

/** A stored run's pinned definition and its workflow's name, for `launchRun` (null: either is gone). */
export async function loadLaunchable(
  models: Models,
  run: RunDoc,
): Promise<{ workflow: { _id: string; name: string }; definition: RunDefinition } | null> {
  const version = run.workflow_version_id
    ? await models.WorkflowVersion.findById(run.workflow_version_id, { definition: 1, name: 1 }).lean<{
        definition: string;
        name: string;
      }>()
    : null;
  if (!version) return null;
  const definition = toRunDefinition(fromJsonText<WorkflowDefinition>(version.definition) as WorkflowDefinition);
  return { workflow: { _id: run.workflow_id, name: version.name }, definition };
}

/**
 * Starts a run record's Temporal workflow (`run-<runId>`). One that is already there (the
 * reconciler, an idempotent replay and the api all got to it) counts as started.
 */
export async function startWorkflowOf(
  deps: Omit<RunLaunchDeps, 'models'>,
  runId: string,
  start: RunWorkflowStart,
): Promise<void> {
  try {
    await deps.temporal.workflow.start(start.type, {
      workflowId: runWorkflowId(runId, deps.workflowIdPrefix),
      taskQueue: deps.taskQueue,
      args: start.args,
      // A second start of a run (an idempotent replay, the reconciler) joins the running workflow
      // and never starts a closed run again: at most one execution per run id.
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      staticSummary: start.summary,
      // The first workflow task runs in this process when it hosts a worker with a free slot.
      requestEagerStart: deps.eagerStart,
      typedSearchAttributes: [
        { key: SpurWorkflowId, value: start.workflowId },
        { key: SpurRunType, value: start.runType },
        { key: SpurRunStatus, value: 'PENDING' },
      ],
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    throw err;
  }
}

/**
 * The reconciler's way in (composed by the worker entry): starts a stored run on this task queue
 * with the client it is given; false when the run's pinned version is gone.
 */
export function storedRunLauncher(models: Models, queue: { taskQueue: string; workflowIdPrefix: string }) {
  return async (run: RunDoc, temporal: Client): Promise<boolean> => {
    const launchable = await loadLaunchable(models, run);
    if (!launchable) return false;
    // A rerun's plan is on its record and the original's tasks (a refused plan is a 400: the run fails).
    const rerun = rerunSourceOf(run);
    const extra =
      rerun && run.rerun_of
        ? rerunExtras(
            launchable.definition,
            rerun,
            await createRunProjection(models, createRunEvents(models)).tasksOf(run.rerun_of),
          )
        : {};
    await launchRun(
      { models, temporal, ...queue, eagerStart: false },
      run,
      launchable.workflow,
      launchable.definition,
      extra,
    );
    return true;
  };
}
