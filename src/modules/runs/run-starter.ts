import { CancelledFailure, type Client, WorkflowFailedError } from '@temporalio/client';
import { insertWithNewId } from '../../db/ids';
import { fromJsonText, toJsonText } from '../../db/json-text';
import type { Models, RunDoc, WorkflowDoc } from '../../db/models';
import { createRunProjection } from '../../db/run-projection';
import { randomUUID } from 'node:crypto';
import { AppError, BadRequestError } from '../../http/errors';
import type { PartialRunInput as PartialRunWorkflowInput, RunDefinition, SpurRunResult } from '../../engine/run-contract';
import { WorkflowType, runWorkflowId } from '../../../temporal/shared/workflow-names';
import type { WorkflowDefinition } from '../workflows/definition.schema';
import type { VersionService } from '../workflows/versions.service';
import type { WorkflowService } from '../workflows/workflows.service';
import { mergeFiles, storeDataUris } from './run-files';
import { type RunWorkflowStart, launchRun, startWorkflowOf } from './run-launch';
import { checkRunnable, resolveRunInputs, toRunDefinition } from './run-inputs';
import type { RunReader } from './runs.service';
import type { PartialRunInput, StartRunInput } from './runs.schemas';

export interface RunStarterDeps {
  models: Models;
  workflows: WorkflowService;
  versions: VersionService;
  reader: RunReader;
  temporal: Client;
  taskQueue: string;
  workflowIdPrefix: string;
  blockingWaitMs: number;
  /** Request eager workflow start: only with a client over a NativeConnection shared with a worker. */
  eagerStart: boolean;
  /** Aborted when the api drains for shutdown: blocking waits end early (the runs go on). */
  stopping?: AbortSignal;
}

/** First and longest wait between pause checks of a blocking run (it backs off: each read scans on FerretDB). */
const PAUSE_POLL_MS = { first: 100, max: 1000 };

export type BlockingOutcome = { kind: 'done'; outputsById: SpurRunResult['outputsById'] } | { kind: 'still-running'; runId: string };

/**
 * Creates run records and starts their Temporal workflows. Everything a client can get wrong is
 * checked before the record exists, so no run is left PENDING by a bad request.
 */
export function createRunStarter(deps: RunStarterDeps) {
  const { models, temporal } = deps;
  const idTaken = async (id: string) => (await models.Run.exists({ _id: id })) !== null;

  /** Checks and stores the run (PENDING); the caller starts its workflow (`launch`). */
  async function record(workflowId: string, request: StartRunInput, runType: string, mergeFileInputs = false): Promise<{ run: RunDoc; workflow: WorkflowDoc; definition: RunDefinition }> {
    const workflow = await deps.workflows.load(workflowId);
    const definition = toRunDefinition(fromJsonText<WorkflowDefinition>(workflow.definition) as WorkflowDefinition);
    resolveRunInputs(definition, request.initial_inputs); // refuse bad input before storing any file
    const withFiles = mergeFileInputs ? mergeFiles(request.initial_inputs, request.files) : request.initial_inputs;
    const initialInputs = (await storeDataUris(models, workflow._id, withFiles)) as StartRunInput['initial_inputs'];
    const body: StartRunInput = { ...request, initial_inputs: initialInputs };
    resolveRunInputs(definition, body.initial_inputs);
    const version = await deps.versions.ensureVersion(workflow);
    const run = await insertWithNewId(models.conn, 'run', idTaken, async (id, seq) => {
      const doc: RunDoc = {
        _id: id, seq, workflow_id: workflow._id, workflow_version_id: version._id, status: 'PENDING', start_time: new Date(), end_time: null,
        initial_inputs: toJsonText(body.initial_inputs ?? {}), outputs: null, parent_run_id: body.parent_run_id, run_type: runType,
        output_file_id: null, input_dataset_id: null, message: null,
      };
      await models.Run.create(doc);
      return doc;
    });
    return { run, workflow, definition };
  }

  async function start(workflowId: string, request: StartRunInput, runType: string, mergeFileInputs = false): Promise<RunDoc> {
    const { run, workflow, definition } = await record(workflowId, request, runType, mergeFileInputs);
    await failIfNotStarted(models, run._id, () => launchRun(deps, run, workflow, definition));
    return run;
  }

  /** Waits for the run's result up to the configured limit; the run goes on either way. */
  async function waitForOutputs(runId: string): Promise<BlockingOutcome> {
    const handle = temporal.workflow.getHandle<() => Promise<SpurRunResult>>(runWorkflowId(runId, deps.workflowIdPrefix));
    const watch = { stopped: false };
    try {
      const result = await resultWithin(Promise.race([handle.result(), pausedOutputs(runId, watch)]));
      if (result === 'timeout' || result === 'stopping') return { kind: 'still-running', runId };
      return { kind: 'done', outputsById: result.outputsById };
    } catch (err) {
      if (err instanceof WorkflowFailedError) {
        // A cancelled run: answer with what it produced, like a paused one.
        if (err.cause instanceof CancelledFailure) return { kind: 'done', outputsById: await outputsFromTasks(runId) };
        throw new AppError(500, 'RUN_WORKFLOW_FAILED', `Run ${runId} failed: ${err.cause?.message ?? err.message}`);
      }
      throw err;
    } finally {
      watch.stopped = true;
    }
  }

  /**
   * A blocking run that reaches a pause answers 200 with the outputs so far (PySpur does), while
   * the run waits for its human. The workflow has not ended, so the projection tells.
   */
  async function pausedOutputs(runId: string, watch: { stopped: boolean }): Promise<SpurRunResult> {
    let wait = PAUSE_POLL_MS.first;
    while (!watch.stopped) {
      const run = await models.Run.findById(runId, { status: 1 }).lean<Pick<RunDoc, 'status'>>();
      if (run?.status === 'PAUSED') return { status: 'PAUSED', outputsById: await outputsFromTasks(runId), message: null };
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 1.5, PAUSE_POLL_MS.max);
    }
    return new Promise<never>(() => undefined); // the result won the race; this one never settles
  }

  async function outputsFromTasks(runId: string): Promise<Record<string, Record<string, unknown>>> {
    const outputs: Record<string, Record<string, unknown>> = {};
    for (const t of await createRunProjection(models).tasksOf(runId)) {
      if ((t.status === 'COMPLETED' || t.status === 'PAUSED') && t.outputs && Object.keys(t.outputs).length > 0) outputs[t.node_id] = t.outputs;
    }
    return outputs;
  }

  /** Races a workflow result against the blocking wait limit and the api's shutdown. */
  async function resultWithin<T>(promise: Promise<T>): Promise<T | 'timeout' | 'stopping'> {
    let timer: NodeJS.Timeout | undefined;
    let onStop: (() => void) | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), deps.blockingWaitMs)));
    const stopping = new Promise<'stopping'>((resolve) => {
      onStop = () => resolve('stopping');
      if (deps.stopping?.aborted) onStop();
      else deps.stopping?.addEventListener('abort', onStop, { once: true });
    });
    try {
      return await Promise.race([promise, timeout, stopping]);
    } finally {
      clearTimeout(timer);
      if (onStop) deps.stopping?.removeEventListener('abort', onStop);
    }
  }

  async function runPartial(workflowId: string, body: PartialRunInput): Promise<Record<string, Record<string, unknown>>> {
    const workflow = await deps.workflows.load(workflowId);
    const definition = toRunDefinition(fromJsonText<WorkflowDefinition>(workflow.definition) as WorkflowDefinition);
    const inputNode = checkRunnable(definition);
    const given = body.initial_inputs ?? {};
    const precomputed = Object.fromEntries(
      Object.entries(body.partial_outputs ?? {}).filter((e): e is [string, Record<string, unknown>] => !Array.isArray(e[1])),
    );
    const input: PartialRunWorkflowInput = {
      definition,
      inputNodeInput: given[inputNode.id] ?? given[inputNode.title] ?? {},
      targetNodeId: body.node_id,
      precomputed,
    };
    const handle = await temporal.workflow.start(WorkflowType.spurPartialRun, {
      workflowId: `${deps.workflowIdPrefix}partial-${workflow._id}-${randomUUID()}`,
      taskQueue: deps.taskQueue,
      args: [input],
      staticSummary: `${workflow.name} (${workflow._id}) partial run of ${body.node_id}`,
      requestEagerStart: deps.eagerStart,
    });
    try {
      const result = await resultWithin(handle.result() as Promise<Record<string, Record<string, unknown>>>);
      if (result === 'timeout') throw new AppError(504, 'PARTIAL_RUN_TIMEOUT', 'The partial run did not finish within the blocking wait limit');
      if (result === 'stopping') throw new AppError(503, 'API_STOPPING', 'The api is shutting down; send the partial run again');
      return result;
    } catch (err) {
      if (err instanceof WorkflowFailedError) throw new BadRequestError(err.cause?.message ?? err.message);
      throw err;
    }
  }

  return {
    runPartial,
    /** Stores a run without starting it: what an api that dies mid-request leaves (the reconciler's case). */
    record: async (workflowId: string, body: StartRunInput, runType: string) => (await record(workflowId, body, runType)).run,
    async start(workflowId: string, body: StartRunInput, runType: string) {
      return deps.reader.get((await start(workflowId, body, runType))._id);
    },
    async runBlocking(workflowId: string, body: StartRunInput, runType: string): Promise<BlockingOutcome> {
      const run = await start(workflowId, body, runType, true);
      return waitForOutputs(run._id);
    },
  };
}

export type RunStarter = ReturnType<typeof createRunStarter>;

/**
 * Starts a run record's Temporal workflow (`run-<runId>`). If Temporal refuses, the record says
 * why (FAILED) and the client gets a 503, never a run left PENDING forever.
 */
export async function startRunWorkflow(deps: Pick<RunStarterDeps, 'models' | 'temporal' | 'taskQueue' | 'workflowIdPrefix' | 'eagerStart'>, runId: string, start: RunWorkflowStart): Promise<void> {
  await failIfNotStarted(deps.models, runId, () => startWorkflowOf(deps, runId, start));
}

async function failIfNotStarted(models: Models, runId: string, starting: () => Promise<void>): Promise<void> {
  try {
    await starting();
  } catch (err) {
    if (err instanceof AppError) throw err;
    // The client's own message is generic ("Failed to start Workflow"); the cause says why
    // (e.g. a server whose search attributes were never registered).
    const cause = (err as { cause?: { message?: unknown } }).cause?.message;
    const message = `Could not start the run on Temporal: ${(err as Error).message}${typeof cause === 'string' ? `: ${cause}` : ''}`;
    await models.Run.updateOne({ _id: runId }, { $set: { status: 'FAILED', message, end_time: new Date() } });
    throw new AppError(503, 'TEMPORAL_UNAVAILABLE', message);
  }
}
