import { CancelledFailure, type Client, WorkflowFailedError } from '@temporalio/client';
import { runCaller } from '../../runs/run-caller';
import { fromJsonText } from '../../db/json-text';
import type { Models, WorkflowDoc } from '../../db/models';
import type { RunRepository } from '../../db/runs/run-repository';
import type { RunTrigger, StoredCallback } from '../../db/runs/run-documents';
import type { Values } from '../../db/values';
import { taskOutputsById } from '../../engine/task-book';
import { randomUUID } from 'node:crypto';
import { SpurError, BadRequestError, ConflictError } from '../../errors';
import { canPause } from '../../engine/node-kinds';
import type { PartialRunInput as PartialRunWorkflowInput, SpurRunResult } from '../../contracts/run-contract';
import { WorkflowType, runWorkflowId } from '../../contracts/workflow-names';
import type { WorkflowDefinition } from '../../definitions/definition.schema';
import type { VersionService } from '../workflows/versions.service';
import type { WorkflowService } from '../workflows/workflows.service';
import type { ChatMemory } from '../sessions/chat-memory';
import type { CallbackService } from '../callbacks/callbacks.service';
import { mergeFiles, storeDataUris } from '../../runs/files';
import type { LaunchResult, RunLauncher } from '../../runs/launcher';
import {
  checkRunnable,
  checkWithinLimits,
  resolveRunInputs,
  storedRunDefinition,
  toRunDefinition,
} from '../../runs/inputs';
import { storeClientValues } from '../../runs/values';
import type { RunReader } from '../../runs/reader';
import type { PartialRunInput, StartRunInput } from './runs.schemas';
import type { RunClaim } from './idempotency';
import type { ExpectedOutcome, RunOutcomes } from '../../engine/run-outcomes';
import type { DefinitionLimits } from '../../config/settings';

export interface RunStarterDeps {
  models: Models;
  values: Values;
  runRecords: RunRepository;
  workflows: WorkflowService;
  versions: VersionService;
  reader: RunReader;
  /** Fills a chatbot run's history from its session. */
  chatMemory: ChatMemory;
  /** Starts a recorded run's workflow (src/runs/launcher.ts). */
  launcher: RunLauncher;
  /** For blocking waits and partial runs. */
  temporal: Client;
  taskQueue: string;
  workflowIdPrefix: string;
  blockingWaitMs: number;
  /** Request eager workflow start: only with a client over a NativeConnection shared with a worker. */
  eagerStart: boolean;
  /** Aborted when the api drains for shutdown: blocking waits end early (the runs go on). */
  stopping?: AbortSignal;
  /** Checks and seals a run's callback before its record exists. */
  callbacks: Pick<CallbackService, 'prepare'>;
  /** Final saves of the worker in this process (combined topology): blocking runs answer from them. */
  outcomes?: RunOutcomes;
  /** SPUR_AGENT_MAX_ITERATIONS and SPUR_LOOP_MAX_TOTAL_ITERATIONS, for definitions stored before they held. */
  definitionLimits: DefinitionLimits;
}

/** Where a run's request came from, besides its client: a trigger (schedule, webhook) and the caller's trace. */
export interface RunOrigin {
  trigger?: RunTrigger;
  /** The trigger's callback, checked and sealed when the trigger was saved: the request carries none. */
  callback?: StoredCallback | null;
  /** The caller's `traceparent`, validated (trace-header.ts): the run's trace continues it. */
  traceParent?: string | null;
}

/**
 * With a worker in this process, how long a blocking run waits for its final save here before it
 * also asks Temporal for the result (the run may be on another worker): the wait's only cost.
 */
const LOCAL_ANSWER_FIRST_MS = 250;

/** First and longest wait between pause checks of a blocking run (it backs off: each read scans on FerretDB). */
const PAUSE_POLL_MS = { first: 100, max: 1000 };

export type BlockingOutcome =
  { kind: 'done'; runId: string; outputsById: SpurRunResult['outputsById'] } | { kind: 'still-running'; runId: string };

/**
 * Starts runs in three steps: `record` checks the request and stores the run (PENDING), claiming
 * its Idempotency-Key; `launch` starts its workflow (the launcher the reconciler and keyed recovery
 * use too); a blocking run then waits (`awaitOutcome`). Everything a client can get wrong is checked
 * before the record exists, so no run is left PENDING by a bad request.
 */
export function createRunStarter(deps: RunStarterDeps) {
  const { models, temporal, runRecords } = deps;

  async function record(
    workflowId: string,
    request: StartRunInput,
    runType: string,
    mergeFileInputs: boolean,
    claim: RunClaim | undefined,
    { trigger, traceParent, callback: triggerCallback }: RunOrigin = {},
  ) {
    const workflow = await deps.workflows.load(workflowId);
    const stored = fromJsonText<WorkflowDefinition>(workflow.definition) as WorkflowDefinition;
    const definition = toRunDefinition(stored);
    checkWithinLimits(definition, deps.definitionLimits);
    resolveRunInputs(definition, request.initial_inputs); // refuse bad input before storing any file
    const callback = triggerCallback ?? (request.callback ? await deps.callbacks.prepare(request.callback) : null);
    const withFiles = mergeFileInputs ? mergeFiles(request.initial_inputs, request.files) : request.initial_inputs;
    const initialInputs = (await storeDataUris(models, workflow._id, withFiles)) as StartRunInput['initial_inputs'];
    resolveRunInputs(definition, initialInputs);
    const version = await deps.versions.ensureVersion(workflow);
    // Large inputs are stored under the run's id before its record exists, and travel by reference.
    const { doc: run, inputs: storedInputs } = await runRecords.create(
      {
        workflowId: workflow._id,
        workflowVersionId: version._id,
        parentRunId: request.parent_run_id,
        runType,
        callback,
        idempotencyKey: claim?.keyId ?? null,
        trigger: trigger ?? null,
        startedBy: runCaller(),
        traceParent: traceParent ?? null,
      },
      initialInputs ?? {},
      (id, given) => storeClientValues(deps.values, id, given, 'initial_inputs'),
    );
    await claim?.claim(run._id);
    return { run, workflow: workflow as WorkflowDoc, definition, spurType: stored.spur_type, storedInputs };
  }

  async function launch(recorded: Awaited<ReturnType<typeof record>>, claim: RunClaim | undefined): Promise<void> {
    const { run, workflow, definition, spurType, storedInputs } = recorded;
    // A chatbot run in a session gets the session's earlier turns; its own turn is stamped with the run's start.
    const chatRun = await deps.chatMemory.prepare(
      spurType,
      definition,
      resolveRunInputs(definition, storedInputs),
      run.start_time,
    );
    expectStarted(
      await deps.launcher.launch(run, {
        workflowName: workflow.name,
        definition,
        inputNodeInput: chatRun.input,
        ...(chatRun.chat ? { chat: chatRun.chat } : {}),
      }),
      run._id,
    );
    await claim?.started();
  }

  /**
   * Waits for the run's result up to the configured limit; the run goes on either way. The answer
   * is the workflow's result; the projection is read only for a graph that can pause.
   */
  async function awaitOutcome(runId: string, mayPause: boolean, local?: ExpectedOutcome): Promise<BlockingOutcome> {
    const handle = temporal.workflow.getHandle<() => Promise<SpurRunResult>>(
      runWorkflowId(runId, deps.workflowIdPrefix),
    );
    const watch = { stopped: false };
    let fallback: NodeJS.Timeout | undefined;
    // Answered from the final save in this process, or from Temporal if that does not come soon.
    const ended: Promise<Pick<SpurRunResult, 'outputsById'>> = local
      ? Promise.race([
          local.outcome,
          new Promise<void>((r) => (fallback = setTimeout(r, LOCAL_ANSWER_FIRST_MS))).then(() => handle.result()),
        ])
      : handle.result();
    try {
      const result = await resultWithin(mayPause ? Promise.race([ended, pausedOutputs(runId, watch)]) : ended);
      if (result === 'timeout' || result === 'stopping') return { kind: 'still-running', runId };
      return { kind: 'done', runId, outputsById: result.outputsById };
    } catch (err) {
      if (err instanceof WorkflowFailedError) {
        // A cancelled run: answer with what it produced, like a paused one.
        if (err.cause instanceof CancelledFailure)
          return { kind: 'done', runId, outputsById: await outputsFromTasks(runId) };
        throw new SpurError(
          'internal',
          'RUN_WORKFLOW_FAILED',
          `Run ${runId} failed: ${err.cause?.message ?? err.message}`,
        );
      }
      throw err;
    } finally {
      watch.stopped = true;
      clearTimeout(fallback);
    }
  }

  /**
   * A blocking run that reaches a pause answers 200 with the outputs so far (PySpur does), while
   * the run waits for its human. The workflow has not ended, so the projection tells.
   */
  async function pausedOutputs(runId: string, watch: { stopped: boolean }): Promise<SpurRunResult> {
    let wait = PAUSE_POLL_MS.first;
    while (!watch.stopped) {
      if ((await runRecords.statusOf(runId)) === 'PAUSED')
        return { status: 'PAUSED', outputsById: await outputsFromTasks(runId), message: null };
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 1.5, PAUSE_POLL_MS.max);
    }
    return new Promise<never>(() => undefined); // the result won the race; this one never settles
  }

  async function outputsFromTasks(runId: string): Promise<Record<string, Record<string, unknown>>> {
    return taskOutputsById(await runRecords.tasksOf(runId), ['COMPLETED', 'PAUSED']);
  }

  /** Races a workflow result against the blocking wait limit and the api's shutdown. */
  async function resultWithin<T>(promise: Promise<T>): Promise<T | 'timeout' | 'stopping'> {
    let timer: NodeJS.Timeout | undefined;
    let onStop: (() => void) | undefined;
    const timeout = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), deps.blockingWaitMs)),
    );
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

  /**
   * A partial run has no run record: its large values live under a scope of their own, which the
   * caller drops (`dropPartial`) once the response has been sent.
   */
  async function runPartial(
    workflowId: string,
    body: PartialRunInput,
    valueScope: string,
  ): Promise<Record<string, Record<string, unknown>>> {
    const workflow = await deps.workflows.load(workflowId);
    const definition = storedRunDefinition(workflow.definition);
    const inputNode = checkRunnable(definition);
    checkWithinLimits(definition, deps.definitionLimits);
    const given = await storeClientValues(deps.values, valueScope, body.initial_inputs ?? {}, 'initial_inputs');
    const precomputed = await storeClientValues(
      deps.values,
      valueScope,
      Object.fromEntries(
        Object.entries(body.partial_outputs ?? {}).filter(
          (e): e is [string, Record<string, unknown>] => !Array.isArray(e[1]),
        ),
      ),
      'partial_outputs',
    );
    const input: PartialRunWorkflowInput = {
      definition,
      inputNodeInput: given[inputNode.id] ?? given[inputNode.title] ?? {},
      targetNodeId: body.node_id,
      precomputed,
      valueScope,
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
      if (result === 'timeout')
        throw new SpurError(
          'timed_out',
          'PARTIAL_RUN_TIMEOUT',
          'The partial run did not finish within the blocking wait limit',
        );
      if (result === 'stopping')
        throw new SpurError('unavailable', 'API_STOPPING', 'The api is shutting down; send the partial run again');
      return result;
    } catch (err) {
      if (err instanceof WorkflowFailedError) throw new BadRequestError(err.cause?.message ?? err.message);
      throw err;
    }
  }

  return {
    runPartial,
    newPartialScope: () => `partial-${randomUUID()}`,
    dropPartial: (valueScope: string) => deps.values.deleteScopes([valueScope]),
    /**
     * PySpur answers start_run with the run as created (PENDING): read before the workflow starts,
     * since a short run may otherwise have ended by the time the answer is read.
     */
    async start(workflowId: string, body: StartRunInput, runType: string, claim?: RunClaim, origin?: RunOrigin) {
      const recorded = await record(workflowId, body, runType, false, claim, origin);
      const created = await deps.reader.get(recorded.run._id);
      await launch(recorded, claim);
      return created;
    },
    async runBlocking(
      workflowId: string,
      body: StartRunInput,
      runType: string,
      claim?: RunClaim,
      origin?: RunOrigin,
    ): Promise<BlockingOutcome> {
      const recorded = await record(workflowId, body, runType, true, claim, origin);
      // Expected before the workflow starts: a fast run may end before the start returns.
      const local = deps.outcomes?.expect(recorded.run._id);
      // Forgotten however this ends: answered, timed out, or the start refused.
      try {
        await launch(recorded, claim);
        return await awaitOutcome(recorded.run._id, canPause(recorded.definition.nodes), local);
      } finally {
        local?.cancel();
      }
    },
    /**
     * A blocking run's answer for a run already started (an idempotent replay waits for the same
     * run); its graph is not at hand, so a pause is looked for.
     */
    awaitOutcome: (runId: string) => awaitOutcome(runId, true),
  };
}

export type RunStarter = ReturnType<typeof createRunStarter>;

/**
 * The api launches a run it has just recorded and checked: one that does not start lost a race
 * (its version or dataset deleted meanwhile, its key taken), which the client is told.
 */
export function expectStarted(result: LaunchResult, runId: string): void {
  if (result.outcome === 'started') return;
  const why = result.outcome === 'failed' ? result.message : 'its Idempotency-Key was taken by another request';
  throw new ConflictError(`Run ${runId} did not start: ${why}`, 'RUN_NOT_STARTED');
}
