import {
  type ActivityOptions,
  ApplicationFailure,
  type LocalActivityOptions,
  condition,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import { GraphWalker, type NodeExecutor, type RunnerHooks } from '../../src/engine/graph-walker';
import { PURE_NODE_TYPES } from '../../src/engine/node-kinds';
import {
  type AgentStepInput,
  type BudgetScope,
  type GraphNode,
  type ProgressSave,
  type SavedAs,
} from '../../src/engine/run-contract';
import {
  AGENT_STEP_ACTIVITY,
  type AgentStepActivity,
  type ExecuteNodeActivity,
  type EndingRegionInput,
  type EndingRegionResult,
  type RunEndPlan,
  type TracedRegionInput,
  nodeActivityName,
} from '../../src/contracts/run-contract';
import { PURE_REGION_ACTIVITY, type PureRegion, type RegionOutcome } from '../../src/engine/pure-region';
import type { RunTrace } from '../../src/contracts/trace-ids';
import type { DryRun } from '../../src/engine/dry-run';
import {
  PURE_NODE_OPTIONS,
  type ShortCallKinds,
  ioNodeOptions,
  pureRegionOptions,
  shortCallOptions,
} from './activity-options';
import { ModelSlots, type SlotWaitHooks } from './model-slots';
import type { CarryKind } from './run-keeper';
import { type BudgetPause, withBudget } from './budget-pause';
import { modelOf, tokenEstimate } from '../../src/engine/model-calls';
import { failureOutcomeOf } from '../../src/contracts/breaker-contract';
import { FailureType, applicationCause } from '../../src/contracts/failures';

export { failureMessage } from '../../src/engine/graph-walker';

/** What a run's model calls need from it: slots of fleet-wide limits, and its budget. */
export interface ModelCallHooks {
  slots: SlotWaitHooks;
  /** The workflow whose budget the calls count against (absent: no budget, as in partial runs). */
  workflowId?: string;
  /** A call would pass the budget: pause at the node for a person's decision. */
  budgetPause?: BudgetPause;
  /** Set in a traced run: its ids, so each node attempt is a span of its trace. */
  trace?: RunTrace;
  /**
   * Short calls may run as local activities (shortCallOptions): only in a run that cannot pause or
   * wait, as a local activity holds its workflow task, and with it every Update and signal (a
   * person's decision, a callback) until the call ends.
   */
  shortCalls: boolean;
  /** Its short calls may be Python nodes too (SpurRunInput.localPython). */
  localPython?: boolean;
  /**
   * A model call over the short-call bound, a regular activity, goes as short calls do: it looks for
   * a fleet-wide limit itself, and carries what the run lets it (SpurRunInput.regularCallsCarry).
   */
  regularCarry?: boolean;
  /** Set in a dry run: every node activity is told, so a node that would act sends nothing. */
  dryRun?: DryRun;
  /**
   * Runs a short call with the save that shows it RUNNING, when it carries it (RunKeeper.carry).
   * Set, a node's activity also runs the pure nodes right after it (NodeExecutor.carriesFollowUp).
   */
  carry?: CarrySave;
  /** A pure region that is all its run has left gets what it needs to end the run (RunKeeper.regionEnd). */
  endRegion?: RegionEnd;
}

/** `plan`: what a region of these nodes needs to end the run, if it may; `ended`: the digest of the save it wrote. */
export interface RegionEnd {
  plan(nodeIds: readonly string[]): RunEndPlan | undefined;
  ended(digest: string): void;
}

/**
 * `end`: set when the call may write the run's final save too (ExecuteNodeInput.end);
 * `followUpIds`: the nodes its follow-up runs, which the run may end with.
 */
export type CarrySave = <T extends { saved?: SavedAs; ended?: string }>(
  nodeId: string,
  call: (save: ProgressSave | undefined, end: RunEndPlan | undefined) => Promise<T>,
  followUpIds?: readonly string[],
) => Promise<T>;

/**
 * Whether a node runs as a short call (a local activity) in a run that allows them, carrying the
 * save that shows it RUNNING: a model call, or a Python node where the run allows those. (A model
 * node without a model runs locally without carrying: as it always has, so its history replays.)
 */
function runsAsShortCall(node: GraphNode, kinds: ShortCallKinds): boolean {
  return shortCallOptions(node, kinds) !== undefined && (modelOf(node) !== undefined || carriesAsCode(node));
}

const carriesAsCode = (node: GraphNode) => node.node_type === 'PythonFuncNode';

/**
 * How a node's call carries the save that shows it RUNNING, if it may (RunKeeper.carry): as a
 * short call, in its local activity; a SingleLLMCallNode over the short-call bound (one model call,
 * its activity's own), in its regular activity, in runs started with SpurRunInput.regularCallsCarry.
 */
export function callCarry(node: GraphNode, kinds: ShortCallKinds, regular: boolean): CarryKind | undefined {
  if (runsAsShortCall(node, kinds)) return 'local';
  return regular && carriesAsRegularCall(node) ? 'regular' : undefined;
}

const carriesAsRegularCall = (node: GraphNode) => node.node_type === 'SingleLLMCallNode' && modelOf(node) !== undefined;

/**
 * A run's graph walked inside its workflow: every node is an activity (pure ones and short calls
 * local), a chain of pure nodes one local activity (a pure region).
 */
export class GraphRunner extends GraphWalker {
  constructor(runId: string, hooks: RunnerHooks, calls: ModelCallHooks) {
    super(runId, hooks, activityExecutor(runId, new ModelSlots(calls.slots), calls));
  }
}

/** `calls.trace`: the run's trace ids, handed to every node activity so its attempts are spans of it. */
function activityExecutor(runId: string, slots: ModelSlots, calls: ModelCallHooks): NodeExecutor {
  const traced = calls.trace ? { trace: calls.trace } : {};
  // Node activities only: agents' model calls and pure regions never act.
  const dry = calls.dryRun ? { dryRun: calls.dryRun } : {};
  const budgeted = <T>(node: GraphNode, input: Record<string, unknown>, call: (budget?: BudgetScope) => Promise<T>) =>
    withBudget(node, input, calls.workflowId, calls.budgetPause, call);
  return {
    // A node's activity runs the pure nodes after it, in runs whose calls carry (calls.carry).
    ...(calls.carry ? { carriesFollowUp: (node: GraphNode) => !PURE_NODE_TYPES.has(node.node_type) } : {}),
    execute: (node, input, followUp) => {
      const model = modelOf(node);
      const short = calls.shortCalls ? shortCallOptions(node, { python: calls.localPython === true }) : undefined;
      // A regular activity's input is kept in the run's history: it carries only a follow-up that
      // reads no other node's output (none copied in); a local activity's input is not kept.
      const regular = followUp && followUp.preset.length === 0 ? { followUp } : {};
      // A Python node run locally carries its RUNNING save and its follow-up, as a short model call does.
      if (short && calls.carry && carriesAsCode(node)) {
        const local = localNodeActivity(node, short);
        const base = { runId, node, input, ...traced, ...dry, ...(followUp ? { followUp } : {}) };
        return calls
          .carry(
            node.id,
            (save, end) => local({ ...base, ...(save ? { save } : {}), ...(end ? { end } : {}) }),
            followUpIdsOf(followUp),
          )
          .then(unlessStopped);
      }
      // A node that calls no model (no limit, no budget) is its activity's promise as is: the
      // walker awaits it directly, and the commands of a run keep the order its history has.
      if (!model) {
        const call = (short ? localNodeActivity(node, short) : nodeActivity(node))({
          runId,
          node,
          input,
          ...traced,
          ...dry,
          ...regular,
        });
        // Returned as it is otherwise: an extra step would move the commands that follow on replay.
        return short && carriesAsCode(node) ? call.then(unlessStopped) : call;
      }
      return budgeted(node, input, async (budget) => {
        const activityInput = { runId, node, input, ...traced, ...dry, ...(budget ? { budget } : {}) };
        // A regular activity carries only the follow-up it may (`regular`): its input is kept in the history.
        const first = short
          ? { activity: localNodeActivity(node, short), followUp }
          : calls.regularCarry && carriesAsRegularCall(node)
            ? { activity: nodeActivity(node), followUp: regular.followUp }
            : undefined;
        if (first) {
          // No limit on its model (the activity checks): one activity, no slot to ask for.
          const call = (save: ProgressSave | undefined, end?: RunEndPlan) =>
            first.activity({
              ...activityInput,
              unlimitedOnly: true,
              ...(save ? { save } : {}),
              ...(first.followUp ? { followUp: first.followUp } : {}),
              ...(end ? { end } : {}),
            });
          try {
            // As many awaits as before stopped results existed: a run's commands keep their order on replay.
            return unlessStopped(
              await (calls.carry ? calls.carry(node.id, call, followUpIdsOf(first.followUp)) : call(undefined)),
            );
          } catch (err) {
            if (applicationCause(err)?.type !== FailureType.ModelLimited) throw err;
          }
        }
        return slots.call(node, model, tokenEstimate(node, input), {
          once: (slots) => nodeActivity(node, 'once')({ ...activityInput, slots }),
          withRetries: () => nodeActivity(node)({ ...activityInput, ...regular }),
        });
      });
    },
    agentStep: (step) =>
      budgeted(step.agent, step.input, (budget) => {
        const model = modelOf(step.agent);
        const activityInput = { ...step, ...traced, ...(budget ? { budget } : {}) };
        if (!model) return agentStepActivity(step)(activityInput);
        return slots.call(step.agent, model, tokenEstimate(step.agent, [step.input, step.transcript]), {
          once: (slots) => agentStepActivity(step, 'once')({ ...activityInput, slots }),
          withRetries: () => agentStepActivity(step)(activityInput),
        });
      }),
    executeRegion: (region) => {
      const end = calls.endRegion?.plan(region.nodes.map((n) => n.id));
      if (!end) return regionActivity(region)({ runId, region, ...traced });
      return endingRegionActivity(region)({ runId, region, ...traced, end }).then((result) => {
        if (result.ended) calls.endRegion?.ended(result.ended);
        return result.outcomes;
      });
    },
    isCancellation,
    providerFailure: failureOutcomeOf,
  };
}

/** The nodes a follow-up runs (none without one). */
const followUpIdsOf = (followUp: PureRegion | undefined): string[] => followUp?.nodes.map((n) => n.id) ?? [];

/** A node's activity options; `once`: a single attempt, its retries made by the run (model-slots.ts). */
function nodeOptions(node: GraphNode, tries: 'retries' | 'once'): ActivityOptions {
  const options = ioNodeOptions(node.config);
  return tries === 'once' ? { ...options, retry: { ...options.retry, maximumAttempts: 1 } } : options;
}

function nodeActivity(node: GraphNode, tries: 'retries' | 'once' = 'retries'): ExecuteNodeActivity {
  const name = nodeActivityName(node.node_type);
  const summary = `${node.title} (${node.id})`;
  if (PURE_NODE_TYPES.has(node.node_type)) {
    return proxyLocalActivities<Record<string, ExecuteNodeActivity>>({ ...PURE_NODE_OPTIONS, summary })[
      name
    ] as ExecuteNodeActivity;
  }
  return proxyActivities<Record<string, ExecuteNodeActivity>>({ ...nodeOptions(node, tries), summary })[
    name
  ] as ExecuteNodeActivity;
}

/**
 * How long a run waits for the cancel its local node activity stopped for: the api marks a cancel
 * only once Temporal has taken it, so this bounds a bug, not a wait.
 */
const STOPPED_WAITS_FOR_CANCEL = '1 minute';

/**
 * A local node activity's result as it is (no step added: a run's commands keep their order on
 * replay), unless the activity stopped on its run's cancel mark (run-cancel-watch.ts): that result
 * has no outcome, and the run waits for the cancel, which reaches it with the workflow task that
 * follows (the wait then ends in the run's cancellation, as when the cancel comes first).
 */
function unlessStopped<T extends { stoppedForCancel?: true }>(result: T): T | Promise<never> {
  return result.stoppedForCancel ? untilCancelled() : result;
}

async function untilCancelled(): Promise<never> {
  await condition(() => false, STOPPED_WAITS_FOR_CANCEL);
  throw ApplicationFailure.nonRetryable(
    `Stopped for a cancel of the run that did not arrive within ${STOPPED_WAITS_FOR_CANCEL}`,
    FailureType.NodeFailed,
  );
}

/** A short call (shortCallOptions) as a local activity: no task queue, no heartbeats. */
function localNodeActivity(node: GraphNode, options: LocalActivityOptions): ExecuteNodeActivity {
  const summary = `${node.title} (${node.id})`;
  return proxyLocalActivities<Record<string, ExecuteNodeActivity>>({ ...options, summary })[
    nodeActivityName(node.node_type)
  ] as ExecuteNodeActivity;
}

/** A pure region as one local activity, named in the Web UI by its nodes. */
type RegionActivity = (input: TracedRegionInput) => Promise<RegionOutcome[]>;

function regionActivity(region: PureRegion): RegionActivity {
  return regionProxy<RegionActivity>(region);
}

/** The same activity for a region that is all its run has left: it may end the run too. */
type EndingRegionActivity = (input: EndingRegionInput) => Promise<EndingRegionResult>;

function endingRegionActivity(region: PureRegion): EndingRegionActivity {
  return regionProxy<EndingRegionActivity>(region);
}

function regionProxy<T>(region: PureRegion): T {
  const summary = region.nodes.map((n) => `${n.title} (${n.id})`).join(' → ');
  return proxyLocalActivities<Record<string, T>>({
    ...pureRegionOptions(region.nodes.length),
    summary,
  })[PURE_REGION_ACTIVITY] as T;
}

/** An agent's model call: its own activity, named in the Web UI by the agent and the turn. */
function agentStepActivity(
  { agent, iteration }: AgentStepInput,
  tries: 'retries' | 'once' = 'retries',
): AgentStepActivity {
  const summary = `${agent.title} (${agent.id}) model call ${iteration}`;
  return proxyActivities<Record<string, AgentStepActivity>>({ ...nodeOptions(agent, tries), summary })[
    AGENT_STEP_ACTIVITY
  ] as AgentStepActivity;
}
