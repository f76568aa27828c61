import { isCancellation, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { GraphWalker, type NodeExecutor, type RunnerHooks } from '../../src/engine/graph-walker';
import { PURE_NODE_TYPES } from '../../src/engine/node-kinds';
import { type AgentStepInput, type GraphNode } from '../../src/engine/run-contract';
import {
  AGENT_STEP_ACTIVITY,
  type AgentStepActivity,
  type ExecuteNodeActivity,
  type TracedRegionInput,
  nodeActivityName,
} from '../shared/run-contract';
import { PURE_REGION_ACTIVITY, type PureRegion, type RegionOutcome } from '../../src/engine/pure-region';
import type { RunTrace } from '../../src/telemetry/trace-ids';
import { PURE_NODE_OPTIONS, ioNodeOptions, pureRegionOptions } from './activity-options';

export { failureMessage } from '../../src/engine/graph-walker';

/**
 * A run's graph walked inside its workflow: every node is an activity (pure ones local), a chain
 * of pure nodes one local activity (a pure region).
 */
export class GraphRunner extends GraphWalker {
  constructor(runId: string, hooks: RunnerHooks, trace?: RunTrace) {
    super(runId, hooks, activityExecutor(runId, trace));
  }
}

/** `trace`: the run's trace ids, handed to every node activity so its attempts are spans of it. */
function activityExecutor(runId: string, trace: RunTrace | undefined): NodeExecutor {
  const traced = trace ? { trace } : {};
  return {
    // Not async: the activity promise is returned as is, so the walker awaits it directly.
    execute: (node, input) => nodeActivity(node)({ runId, node, input, ...traced }),
    agentStep: (input) => agentStepActivity(input)({ ...input, ...traced }),
    executeRegion: (region) => regionActivity(region)({ runId, region, ...traced }),
    isCancellation,
  };
}

function nodeActivity(node: GraphNode): ExecuteNodeActivity {
  const name = nodeActivityName(node.node_type);
  const summary = `${node.title} (${node.id})`;
  if (PURE_NODE_TYPES.has(node.node_type)) {
    return proxyLocalActivities<Record<string, ExecuteNodeActivity>>({ ...PURE_NODE_OPTIONS, summary })[
      name
    ] as ExecuteNodeActivity;
  }
  return proxyActivities<Record<string, ExecuteNodeActivity>>({ ...ioNodeOptions(node.config), summary })[
    name
  ] as ExecuteNodeActivity;
}

/** A pure region as one local activity, named in the Web UI by its nodes. */
type RegionActivity = (input: TracedRegionInput) => Promise<RegionOutcome[]>;

function regionActivity(region: PureRegion): RegionActivity {
  const summary = region.nodes.map((n) => `${n.title} (${n.id})`).join(' → ');
  return proxyLocalActivities<Record<string, RegionActivity>>({
    ...pureRegionOptions(region.nodes.length),
    summary,
  })[PURE_REGION_ACTIVITY] as RegionActivity;
}

/** An agent's model call: its own activity, named in the Web UI by the agent and the turn. */
function agentStepActivity({ agent, iteration }: AgentStepInput): AgentStepActivity {
  const summary = `${agent.title} (${agent.id}) model call ${iteration}`;
  return proxyActivities<Record<string, AgentStepActivity>>({ ...ioNodeOptions(agent.config), summary })[
    AGENT_STEP_ACTIVITY
  ] as AgentStepActivity;
}
