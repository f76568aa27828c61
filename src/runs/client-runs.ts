import { fromJsonText } from '../db/json-text';
import type { Models, WorkflowDoc } from '../db/models';
import type { RunTrigger, StoredCallback } from '../db/runs/run-documents';
import { ConflictError } from '../errors';
import { canPause } from '../engine/node-kinds';
import type { RunOutcomes } from '../engine/run-outcomes';
import type { WorkflowDefinition } from '../definitions/definition.schema';
import type { DefinitionLimits } from '../config/settings';
import type { ChatMemory } from './chat-memory';
import { mergeFiles, storeDataUris } from './files';
import { checkWithinLimits, resolveRunInputs, toRunDefinition } from './inputs';
import type { LaunchResult, RunLauncher } from './launcher';
import type { OutcomeWait, BlockingOutcome } from './outcome-wait';
import type { RunReader } from './reader';
import type { RunClaim, RunRecorder } from './recorder';
import { RUN_KINDS, type RunKind } from './run-kinds';

type Inputs = Record<string, Record<string, unknown>>;

/** The kinds of run a client starts on one workflow with its inputs (the api, a webhook, MCP, the OpenAI endpoint). */
export type ClientRunKind = Extract<RunKind, 'start_run' | 'blocking' | 'webhook' | 'mcp' | 'openai'>;

/** A start request as the api validated it (StartRunRequest); its callback is sealed by `prepareCallback`. */
export interface ClientRunBody<Callback> {
  initial_inputs: Inputs | null;
  parent_run_id: string | null;
  files: Record<string, string[]> | null;
  callback?: Callback | undefined;
}

/** Where a run's request came from, besides its body. */
export interface RunOrigin {
  /** The client's `?run_type=` (the api's own kinds; the others have their own run type). */
  runType?: string;
  claim?: RunClaim;
  trigger?: RunTrigger;
  /** The trigger's callback, checked and sealed when the trigger was saved: the request carries none. */
  callback?: StoredCallback | null;
  /** The caller's `traceparent`, validated: the run's trace continues it. */
  traceParent?: string | null;
  /** A held webhook delivery released by its workflow's resume (RunRequest.releasesHeld). */
  releasesHeld?: boolean;
}

export interface ClientRunDeps<Callback> {
  models: Models;
  workflows: { load(id: string): Promise<WorkflowDoc> };
  recorder: RunRecorder;
  /** Starts a recorded run's workflow. */
  launcher: RunLauncher;
  reader: RunReader;
  wait: OutcomeWait;
  /** Fills a chatbot run's history from its session. */
  chatMemory: ChatMemory;
  /** Checks and seals a client's callback before its run's record exists (a 422 if refused). */
  prepareCallback: (request: Callback) => Promise<StoredCallback>;
  /** Final saves of the worker in this process (combined topology): blocking runs answer from them. */
  outcomes?: RunOutcomes;
  /** SPUR_AGENT_MAX_ITERATIONS and SPUR_LOOP_MAX_TOTAL_ITERATIONS, for definitions stored before they held. */
  definitionLimits: DefinitionLimits;
}

/**
 * A client's run of a workflow, whoever the client is: checked, recorded (the one recorder),
 * launched, and for a blocking one awaited. Everything a client can get wrong is checked before the
 * record exists, so no run is left PENDING by a bad request.
 */
export function createClientRuns<Callback>(deps: ClientRunDeps<Callback>) {
  async function record(kind: ClientRunKind, workflowId: string, body: ClientRunBody<Callback>, origin: RunOrigin) {
    const workflow = await deps.workflows.load(workflowId);
    const stored = fromJsonText<WorkflowDefinition>(workflow.definition) as WorkflowDefinition;
    const definition = toRunDefinition(stored);
    checkWithinLimits(definition, deps.definitionLimits);
    resolveRunInputs(definition, body.initial_inputs); // refuse bad input before storing any file
    const callback = origin.callback ?? (body.callback ? await deps.prepareCallback(body.callback) : null);
    const given = RUN_KINDS[kind].mergesFiles ? mergeFiles(body.initial_inputs, body.files) : body.initial_inputs;
    const inputs = (await storeDataUris(deps.models, workflow._id, given)) as Inputs | null;
    resolveRunInputs(definition, inputs);
    const recorded = await deps.recorder.record({
      kind,
      ...(origin.runType !== undefined ? { runType: origin.runType } : {}),
      version: { current: workflow },
      inputs,
      parentRunId: body.parent_run_id,
      callback,
      ...(origin.claim ? { claim: origin.claim } : {}),
      trigger: origin.trigger ?? null,
      traceParent: origin.traceParent ?? null,
      ...(origin.releasesHeld ? { releasesHeld: true } : {}),
    });
    return { ...recorded, workflow, definition, spurType: stored.spur_type };
  }

  async function launch(recorded: Awaited<ReturnType<typeof record>>, claim: RunClaim | undefined): Promise<void> {
    const { run, workflow, definition, spurType, initialInputs } = recorded;
    // A chatbot run in a session gets the session's earlier turns; its own turn is stamped with the run's start.
    const chatRun = await deps.chatMemory.prepare(
      spurType,
      definition,
      resolveRunInputs(definition, initialInputs),
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

  return {
    /**
     * Answered with the run as recorded (PENDING), as PySpur answers start_run: read before the
     * workflow starts, since a short run may otherwise have ended by the time the answer is read.
     */
    async recordAndLaunch(
      kind: ClientRunKind,
      workflowId: string,
      body: ClientRunBody<Callback>,
      origin: RunOrigin = {},
    ) {
      const recorded = await record(kind, workflowId, body, origin);
      const created = await deps.reader.recorded(recorded.run._id);
      await launch(recorded, origin.claim);
      return created;
    },
    async recordAndAwait(
      kind: ClientRunKind,
      workflowId: string,
      body: ClientRunBody<Callback>,
      origin: RunOrigin = {},
    ): Promise<BlockingOutcome> {
      const recorded = await record(kind, workflowId, body, origin);
      // Expected before the workflow starts: a fast run may end before the start returns.
      const local = deps.outcomes?.expect(recorded.run._id);
      // Forgotten however this ends: answered, timed out, or the start refused.
      try {
        await launch(recorded, origin.claim);
        return await deps.wait.awaitOutcome(recorded.run._id, canPause(recorded.definition.nodes), local);
      } finally {
        local?.cancel();
      }
    },
    /**
     * A blocking run's answer for a run already launched (an idempotent replay waits for the same
     * run); its graph is not at hand, so a pause is looked for.
     */
    awaitOutcome: (runId: string) => deps.wait.awaitOutcome(runId, true),
  };
}

export type ClientRuns<Callback = unknown> = ReturnType<typeof createClientRuns<Callback>>;

/**
 * The api launches a run it has just recorded and checked: one that does not start lost a race
 * (its version or dataset deleted meanwhile, its key taken), which the client is told.
 */
export function expectStarted(result: LaunchResult, runId: string): void {
  if (result.outcome === 'started') return;
  const why = result.outcome === 'failed' ? result.message : 'its Idempotency-Key was taken by another request';
  throw new ConflictError(`Run ${runId} did not start: ${why}`, 'RUN_NOT_STARTED');
}
