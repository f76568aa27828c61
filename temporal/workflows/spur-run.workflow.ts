import {
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
} from '@temporalio/workflow';
import { FailureType } from '../../src/contracts/failures';
import { GraphError, type GraphLevel, nodesRunningAlone, planGraph } from '../../src/engine/graph';
import type { RunRerun, SpurRunInput, SpurRunResult } from '../../src/contracts/run-contract';
import type { NodeState } from '../../src/engine/node-inputs';
import { CANCELED_MESSAGE, type RunStatus } from '../../src/engine/statuses';
import { type LevelOptions, collectOutputs } from '../../src/engine/graph-walker';
import { reusedStates } from '../../src/engine/rerun-plan';
import { GraphRunner, callCarry, failureMessage } from './graph-runner';
import { RunKeeper } from './run-keeper';
import { PauseDesk } from './pause-desk';
import { WaitDesk } from './wait-desk';
import { recordChatTurn } from './chat-turn';
import { announceEnd } from './callbacks';
import { runSubworkflow } from './subworkflow-call';
import { needsOwnWorkflow } from '../../src/engine/node-kinds';

/** One Temporal workflow per run (`run-<runId>`): schedule the graph, keep the projection current. */
export async function spurRun(input: SpurRunInput): Promise<SpurRunResult> {
  const level = plan(input);
  // A short call no other node runs beside carries the save that shows it RUNNING (RunKeeper.carry).
  const alone = input.callsCarry && shortCallsIn(input) ? nodesRunningAlone(level) : new Set<string>();
  const kinds = { python: input.localPython === true };
  const regular = input.regularCallsCarry === true;
  const keeper = new RunKeeper(input, level.nodes, (node) =>
    alone.has(node.id) ? callCarry(node, kinds, regular) : undefined,
  );
  const desk = new PauseDesk(input, keeper);
  const waits = new WaitDesk(input.runId, keeper, input.dryRun);
  // Handlers first, before any await, so an early action (or callback) is never dropped.
  desk.listen();
  waits.listen();

  try {
    const result = await executeRun(input, level, keeper, desk, waits);
    if (keeper.saveFailure !== null) throw keeper.saveFailure;
    await condition(allHandlersFinished);
    return result;
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    // A stopped run's graph was cancelled by its keeper, not by a client: it ends as refused, below.
    if (isCancellation(err) && !keeper.stopped) {
      // Cancel: record it whatever else was cancelled with the run, then end as cancelled.
      await keeper.cancel(CANCELED_MESSAGE);
      await announceEnd(input.runId, input.callback, 'CANCELED');
      throw err;
    }
    const message = `Run failed: ${failureMessage(keeper.stopped ? keeper.saveFailure : err)}`;
    // Its record could not be saved: the failing write recorded FAILED with the reason; end here.
    if (keeper.saveFailure !== null) {
      keeper.showSaveFailed();
      await announceEnd(input.runId, input.callback, 'FAILED');
      throw ApplicationFailure.nonRetryable(message, FailureType.ProjectionRejected);
    }
    // Whatever went wrong, the run record must not stay PENDING/RUNNING: record why it failed.
    await keeper.finish({ status: 'FAILED', message, outputsByTitle: {}, outputsById: {} });
    await announceEnd(input.runId, input.callback, 'FAILED');
    return { status: 'FAILED', outputsById: {}, message };
  }
}

async function executeRun(
  input: SpurRunInput,
  level: GraphLevel,
  keeper: RunKeeper,
  desk: PauseDesk,
  waits: WaitDesk,
): Promise<SpurRunResult> {
  const { dryRun } = input;
  const runner = new GraphRunner(
    input.runId,
    {
      recordTask: (write) => keeper.recordTask(write),
      onNodeFailed: (node, error) => keeper.nodeFailed(node, error),
      beforeSlowNode: (node, nodeInput) => keeper.beforeSlowNode(node, nodeInput),
      afterSlowNode: () => keeper.slowNodeDone(),
      // A run that is not dry gets pauseAt's own promise: its commands keep their order in history.
      pause: (node, nodeInput) =>
        dryRun ? Promise.resolve(desk.decideByPolicy(node, nodeInput, dryRun.pauses)) : desk.pauseAt(node, nodeInput),
      subworkflow: (node, nodeInput) =>
        runSubworkflow(
          input.runId,
          node,
          nodeInput,
          { waitingFor: (id, child) => keeper.childWaiting(id, child) },
          dryRun,
        ),
      wait: (node, nodeInput) => waits.waitAt(node, nodeInput),
      mayStart: () => keeper.mayStart(),
    },
    {
      slots: {
        waiting: (nodeId, key, reason) => keeper.slotWaiting(nodeId, key, reason),
        granted: (nodeId, waitedMs) => keeper.slotGranted(nodeId, waitedMs),
      },
      workflowId: input.workflowId,
      budgetPause: (node, nodeInput, message) => desk.pauseForBudget(node, nodeInput, message),
      shortCalls: shortCallsIn(input),
      ...(input.localPython ? { localPython: true } : {}),
      ...(input.regularCallsCarry ? { regularCarry: true } : {}),
      // Only in runs started so: a history recorded before replays with the steps as they ran.
      ...(input.callsCarry ? { carry: keeper.carry.bind(keeper) } : {}),
      // Only in runs started so: a history recorded before replays with its final save as it ran.
      ...(input.endsCarried
        ? {
            endRegion: {
              plan: (nodeIds: readonly string[]) => keeper.regionEnd(nodeIds),
              ended: (digest: string) => keeper.endedBy(digest),
            },
          }
        : {}),
      ...(input.trace ? { trace: input.trace } : {}),
      ...(dryRun ? { dryRun } : {}),
    },
  );
  const preset = input.resume ? new Map(input.resume.states) : undefined;
  // Its own scope, so a save refused for good can stop the graph (RunKeeper.stopped) and the run still
  // end; only in runs started so (a history recorded before replays as it ran).
  const graph = new CancellationScope();
  if (input.stopsWhenRefused) keeper.whenStopped(() => graph.cancel());
  const states = await graph.run(() =>
    runner.runLevel(
      level,
      input.inputNodeInput,
      true,
      input.rerun ? rerunOptions(input.rerun, keeper, preset) : preset ? { preset } : {},
    ),
  );
  // Refused on its last save before the end: nothing more is written, the run ends as refused.
  if (keeper.stopped) throw keeper.saveFailure;
  if (keeper.continuing) {
    // The history grew large: what has ended is saved and carried over; the rest runs in the next execution.
    await keeper.saveAll();
    await condition(allHandlersFinished);
    return continueAsNew<typeof spurRun>({ ...input, resume: keeper.resumeState(states) });
  }

  const status: RunStatus =
    keeper.declined !== null ? 'CANCELED' : keeper.firstFailure !== null ? 'FAILED' : 'COMPLETED';
  const message = keeper.declined ?? keeper.firstFailure;
  const outputs = collectOutputs(level, states);
  await recordChatTurn(input, level, states);
  await keeper.finish({ status, message, outputsByTitle: outputs.byTitle, outputsById: outputs.byId });
  // A save that failed earlier makes the run end FAILED (spurRun): that is the event then.
  if (keeper.saveFailure === null) await announceEnd(input.runId, input.callback, status);
  return { status, outputsById: outputs.byId, message };
}

/**
 * A rerun presets the reused nodes (a continued execution's own states already hold them) and
 * shows their original tasks from its first save; its start node may get the client's input.
 */
function rerunOptions(rerun: RunRerun, keeper: RunKeeper, resumed: Map<string, NodeState> | undefined): LevelOptions {
  if (!resumed) keeper.tasks.adopt(rerun.tasks);
  return {
    preset: resumed ?? reusedStates(rerun.tasks),
    ...(rerun.inputOverride ? { inputOverrides: new Map([[rerun.fromNodeId, rerun.inputOverride]]) } : {}),
  };
}

/** Short calls run as local activities only in a run that cannot pause or wait (ModelCallHooks.shortCalls). */
function shortCallsIn(input: SpurRunInput): boolean {
  return !needsOwnWorkflow(input.definition.nodes);
}

function plan(input: SpurRunInput): GraphLevel {
  try {
    return planGraph(input.definition);
  } catch (err) {
    // The api checks graphs before starting; this guards definitions changed underneath it.
    if (err instanceof GraphError) throw ApplicationFailure.nonRetryable(err.message, FailureType.InvalidGraph);
    throw err;
  }
}
