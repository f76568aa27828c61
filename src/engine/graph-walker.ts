import { type GraphLevel, topologicalOrder } from './graph';
import { type NodeState, decideNodeInput } from './node-inputs';
import { ENGINE_NODE_TYPES, PURE_NODE_TYPES, WAITING_NODE_TYPES } from './node-kinds';
import {
  type AgentStepInput,
  type AgentStepResult,
  type ExecuteNodeResult,
  type GraphNode,
  type NodeOutput,
  type TaskWrite,
} from './run-contract';
import { UPSTREAM_FAILURE } from './statuses';
import { runForLoop } from './for-loop';
import { runAgent } from './agent-loop';
import { runBestOfN } from './best-of-n';
import { type ProviderFailureKind, failureUsage } from './failure-usage';
import { withFallbackModels } from './model-fallbacks';
import { answerFields, taskWrite } from './task-writes';
import type { CompositeResult, StepRunner } from './composite';
import { type PureRegion, type RegionOutcome, followUpRegion, pureRegionFrom } from './pure-region';

export interface LevelOptions {
  /** Nodes whose outcome is already known (a partial run's precomputed outputs): not executed. */
  preset?: ReadonlyMap<string, NodeState>;
  /** Partial runs accept an empty input; a real run's InputNode fails without one. */
  allowEmptyInput?: boolean;
  /** Inputs given instead of what the predecessors hand on (a rerun's start node), by node id. */
  inputOverrides?: ReadonlyMap<string, Record<string, unknown>>;
}

export interface RunnerHooks {
  /** A top-level node's task changed (kept in memory, saved by the keeper). */
  recordTask(write: TaskWrite): void;
  onNodeFailed(node: GraphNode, error: string): void;
  /** A slow (non-pure) top-level node is about to start / has ended. */
  beforeSlowNode?(node: GraphNode, input: Record<string, unknown>): Promise<void>;
  afterSlowNode?(node: GraphNode): void;
  /** A HumanInterventionNode was reached: wait for a human; the returned state is the node's. */
  pause?(node: GraphNode, input: Record<string, unknown>): Promise<NodeState>;
  /**
   * A top-level SubworkflowNode was reached: run its workflow as a child run; the returned state
   * is the node's (its task is written from it). Absent, or inside a loop, the node's `execute` refuses.
   */
  subworkflow?(node: GraphNode, input: Record<string, unknown>): Promise<NodeState>;
  /**
   * A WaitNode or WaitForCallbackNode was reached: wait durably (it writes its own task); the
   * returned state is the node's. Absent (partial runs): the node's activity says it cannot wait there.
   */
  wait?(node: GraphNode, input: Record<string, unknown>): Promise<NodeState>;
  /**
   * Asked before a top-level node starts. False: the run is about to continue as new, so the node
   * (and everything after it) is left for the next execution; the nodes in flight finish first.
   */
  mayStart?(node: GraphNode): boolean;
}

/** Where nodes actually run: Temporal activities in a run's workflow, in-process in a batch chunk. */
export interface NodeExecutor {
  /**
   * `followUp`: the pure nodes to run right after the node answers, when `carriesFollowUp` says its
   * call can; their outcomes come back with its own (none when the call did not run them).
   */
  execute(
    node: GraphNode,
    input: Record<string, unknown>,
    followUp?: PureRegion,
  ): Promise<
    Pick<ExecuteNodeResult, 'output' | 'startTime' | 'usage'> & { endTime?: string; followUp?: RegionOutcome[] }
  >;
  /** Whether the node's call can run the pure nodes after it (followUpRegion). Absent: none can. */
  carriesFollowUp?(node: GraphNode): boolean;
  /** One model call of an AgentNode; without it agents run as a single node (and fail as not executable). */
  agentStep?(input: AgentStepInput): Promise<AgentStepResult>;
  /** Runs a pure region (pure-region.ts) as one step. Absent: every node runs on its own. */
  executeRegion?(region: PureRegion): Promise<RegionOutcome[]>;
  /** The whole run is being cancelled: stop, do not record a node failure. */
  isCancellation(err: unknown): boolean;
  /**
   * How the provider failed a model call for good, if it did: such a failure moves a node on to
   * its next `llm_info.fallback_models` entry. Absent: no fallbacks are tried.
   */
  providerFailure?(err: unknown): ProviderFailureKind | undefined;
}

/**
 * Walks one level of the graph the way PySpur's executor does: every node waits for its own
 * predecessors only, so independent branches run in parallel; failures and untaken routes cancel
 * what depends on them while the other branches finish.
 */
export class GraphWalker {
  /** The executor's calls, each node trying its fallback models (model-fallbacks.ts). */
  private readonly calls: ReturnType<typeof withFallbackModels>;

  constructor(
    readonly runId: string,
    private readonly hooks: RunnerHooks,
    private readonly executor: NodeExecutor,
  ) {
    this.calls = withFallbackModels(executor, failureMessage);
  }

  async runLevel(
    level: GraphLevel,
    inputNodeInput: Record<string, unknown>,
    record: boolean,
    options: LevelOptions = {},
  ): Promise<Map<string, NodeState>> {
    const states = new Map<string, NodeState>(options.preset ?? []);
    const finished = new Map<string, Promise<void>>();
    for (const id of topologicalOrder(level)) {
      if (states.has(id)) {
        finished.set(id, Promise.resolve());
        continue;
      }
      const predecessors = (level.incoming.get(id) ?? []).map((l) => finished.get(l.source_id));
      finished.set(
        id,
        Promise.all(predecessors).then(() => this.runNode(level, id, states, inputNodeInput, record, options)),
      );
    }
    await Promise.all(finished.values());
    return states;
  }

  private async runNode(
    level: GraphLevel,
    id: string,
    states: Map<string, NodeState>,
    inputNodeInput: Record<string, unknown>,
    record: boolean,
    options: LevelOptions,
  ) {
    // Already run as part of a pure region that an earlier node started.
    if (states.has(id)) return;
    const node = level.byId.get(id) as GraphNode;
    if (record && this.hooks.mayStart && !this.hooks.mayStart(node)) return;
    if (node.node_type === ENGINE_NODE_TYPES.input) {
      const empty = Object.keys(inputNodeInput).length === 0 && !options.allowEmptyInput;
      const state: NodeState = empty
        ? { status: 'FAILED', error: `Node ${id} has no input` }
        : { status: 'COMPLETED', output: inputNodeInput };
      return this.settle(node, state, record, { inputs: {}, outputs: empty ? null : inputNodeInput }, states);
    }
    const override = options.inputOverrides?.get(id);
    const decision = override ? { kind: 'run' as const, input: override } : decideNodeInput(level, id, states);
    if (decision.kind === 'fail')
      return this.settle(node, { status: 'FAILED', error: decision.error }, record, {}, states);
    if (decision.kind === 'cancel') {
      const state: NodeState = { status: 'CANCELED', upstreamFailure: decision.upstreamFailure };
      return this.settle(node, state, record, { error: decision.upstreamFailure ? UPSTREAM_FAILURE : null }, states);
    }
    if (node.node_type === ENGINE_NODE_TYPES.humanIntervention && this.hooks.pause) {
      // The pause writes its own task (PAUSED, then COMPLETED or CANCELED) and pause record.
      states.set(id, await this.hooks.pause(node, decision.input));
      return;
    }
    if (record && node.node_type === ENGINE_NODE_TYPES.subworkflow && this.hooks.subworkflow) {
      await this.hooks.beforeSlowNode?.(node, decision.input);
      const state = await this.hooks.subworkflow(node, decision.input);
      this.hooks.afterSlowNode?.(node);
      return this.settle(node, state, record, { inputs: decision.input }, states);
    }
    if (WAITING_NODE_TYPES.has(node.node_type) && this.hooks.wait) {
      states.set(id, await this.hooks.wait(node, decision.input));
      return;
    }
    if (node.node_type === ENGINE_NODE_TYPES.forLoop) {
      const result = await runForLoop(this, level, node, decision.input);
      return this.settle(
        node,
        result.state,
        record,
        { inputs: decision.input, outputs: result.output, subworkflowOutput: result.history },
        states,
      );
    }
    const slow = record && !PURE_NODE_TYPES.has(node.node_type);
    const executeRegion = this.executor.executeRegion;
    // A node given its own input (a rerun's start) never joins a region or a follow-up.
    const excluded = new Set(options.inputOverrides?.keys());
    if (!override && executeRegion) {
      const region = pureRegionFrom(level, id, states, excluded);
      if (region) return this.runRegion(executeRegion, node, region, decision.input, record, states);
    }
    // Top-level only: the follow-up's tasks are recorded as the nodes' own.
    const followUp =
      record && !override && this.executor.carriesFollowUp?.(node) ? followUpRegion(level, id, states, excluded) : null;
    if (slow) await this.hooks.beforeSlowNode?.(node, decision.input);
    try {
      const result = await this.executeOne(level, node, decision.input, followUp ?? undefined);
      if (slow) this.hooks.afterSlowNode?.(node);
      this.settle(node, result.state, record, { inputs: decision.input, ...result.extra }, states);
      // Adopted before the nodes' own turns come: they find themselves ended, as in a region.
      for (const { nodeId, state, write } of result.followUp ?? []) {
        const next = level.byId.get(nodeId);
        if (next) this.adopt(next, state, write, states);
      }
    } catch (err) {
      if (this.executor.isCancellation(err)) throw err; // the run itself is being cancelled: stop, do not record a failure
      if (slow) this.hooks.afterSlowNode?.(node);
      const usage = failureUsage(err);
      this.settle(
        node,
        { status: 'FAILED', error: failureMessage(err) },
        record,
        {
          inputs: decision.input,
          ...(usage ? { usage } : {}),
        },
        states,
      );
    }
  }

  /**
   * The region's nodes end as its step says. If the step itself fails (its retries spent), the
   * start node fails with the reason; the nodes after it are then cancelled as usual.
   */
  private async runRegion(
    executeRegion: NonNullable<NodeExecutor['executeRegion']>,
    start: GraphNode,
    region: PureRegion,
    input: Record<string, unknown>,
    record: boolean,
    states: Map<string, NodeState>,
  ) {
    let outcomes: RegionOutcome[];
    try {
      outcomes = await executeRegion(region);
    } catch (err) {
      if (this.executor.isCancellation(err)) throw err;
      return this.settle(start, { status: 'FAILED', error: failureMessage(err) }, record, { inputs: input }, states);
    }
    for (const { nodeId, state, write } of outcomes) {
      const node = region.nodes.find((n) => n.id === nodeId);
      if (node) this.adopt(node, state, record ? write : null, states);
    }
  }

  /** A node as one activity, or a composite (Agent, BestOfN) as its steps. */
  private async executeOne(
    level: GraphLevel,
    node: GraphNode,
    input: Record<string, unknown>,
    followUp?: PureRegion,
  ): Promise<{ state: NodeState; extra: Partial<TaskWrite>; followUp?: RegionOutcome[] }> {
    let composite: CompositeResult | undefined;
    if (node.node_type === ENGINE_NODE_TYPES.agent && this.executor.agentStep) {
      composite = await runAgent(this.steps(), level, node, input);
    } else if (node.node_type === ENGINE_NODE_TYPES.bestOfN) {
      composite = await runBestOfN(this.steps(), node, input);
    }
    if (composite) {
      return {
        state: composite.state,
        extra: { subworkflowOutput: composite.history, ...(composite.usage ? { usage: composite.usage } : {}) },
      };
    }
    const result = await this.calls.execute(node, input, followUp);
    return {
      ...(result.followUp ? { followUp: result.followUp } : {}),
      state: { status: 'COMPLETED', output: result.output },
      extra: answerFields(node, result),
    };
  }

  private steps(): StepRunner {
    const { executor, hooks } = this;
    return {
      runId: this.runId,
      execute: (node, input) => this.calls.execute(node, input),
      agentStep: (input) => this.calls.agentStep(input),
      ...(hooks.pause
        ? {
            pause: (node: GraphNode, input: Record<string, unknown>) =>
              (hooks.pause as NonNullable<RunnerHooks['pause']>)(node, input),
          }
        : {}),
      isCancellation: (err) => executor.isCancellation(err),
      failureMessage,
    };
  }

  /** Stores the node's final state and, for top-level nodes, its task record. */
  private settle(
    node: GraphNode,
    state: NodeState,
    record: boolean,
    extra: Partial<TaskWrite>,
    states: Map<string, NodeState>,
  ): void {
    this.adopt(node, state, record ? taskWrite(node.id, state, extra, () => new Date().toISOString()) : null, states);
  }

  /** A node's final state and (null: not recorded) its task write. */
  private adopt(node: GraphNode, state: NodeState, write: TaskWrite | null, states: Map<string, NodeState>): void {
    states.set(node.id, state);
    if (state.status === 'FAILED') this.hooks.onNodeFailed(node, state.error);
    if (write) this.hooks.recordTask(write);
  }
}

/** The message a user can act on: the root cause's, not "Activity task failed". */
export function failureMessage(err: unknown): string {
  let cur: unknown = err;
  while (cur instanceof Error && (cur as { cause?: unknown }).cause instanceof Error)
    cur = (cur as { cause: Error }).cause;
  return cur instanceof Error ? cur.message : String(err);
}

/** Nodes that produced a non-empty output: by id for the blocking response, by title for the run. */
export function collectOutputs(
  level: { nodes: ReadonlyArray<Pick<GraphNode, 'id' | 'title'>> },
  states: ReadonlyMap<string, NodeState>,
) {
  const byId: Record<string, NodeOutput> = {};
  const byTitle: Record<string, NodeOutput> = {};
  for (const node of level.nodes) {
    const state = states.get(node.id);
    if (state?.status !== 'COMPLETED' || !state.output || Object.keys(state.output).length === 0) continue;
    byId[node.id] = state.output;
    byTitle[node.title] = state.output;
  }
  return { byId, byTitle };
}

/** The run's message when a node failed (the first failure names the run's cause). */
export function nodeFailureMessage(node: GraphNode, error: string): string {
  return `Node '${node.title}' (${node.id}) failed: ${error.split('\n')[0]}`;
}
