import { type ActivityOptions, isCancellation, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { GraphWalker, type NodeExecutor, type RunnerHooks } from '../../src/engine/graph-walker';
import { PURE_NODE_TYPES } from '../../src/engine/node-kinds';
import { type AgentStepInput, type GraphNode } from '../../src/engine/run-contract';
import {
  AGENT_STEP_ACTIVITY,
  type AgentStepActivity,
  type ExecuteNodeActivity,
  nodeActivityName,
} from '../shared/run-contract';
import { PURE_REGION_ACTIVITY, type PureRegion, type PureRegionActivity } from '../../src/engine/pure-region';
import { PURE_NODE_OPTIONS, ioNodeOptions, pureRegionOptions } from './activity-options';
import { ModelSlots, type SlotWaitHooks, tokenEstimate } from './model-slots';
import { modelOf } from '../../src/engine/model-calls';

export { failureMessage } from '../../src/engine/graph-walker';

/**
 * A run's graph walked inside its workflow: every node is an activity (pure ones local), a chain
 * of pure nodes one local activity (a pure region).
 */
export class GraphRunner extends GraphWalker {
  constructor(runId: string, hooks: RunnerHooks, slotHooks: SlotWaitHooks) {
    super(runId, hooks, activityExecutor(runId, new ModelSlots(slotHooks)));
  }
}

function activityExecutor(runId: string, slots: ModelSlots): NodeExecutor {
  return {
    execute: (node, input) => {
      const model = modelOf(node);
      // Not async: the activity promise is returned as is, so the walker awaits it directly.
      if (!model) return nodeActivity(node)({ runId, node, input });
      return slots.call(node, model, tokenEstimate(node, input), {
        once: () => nodeActivity(node, 'once')({ runId, node, input }),
        withRetries: () => nodeActivity(node)({ runId, node, input }),
      });
    },
    agentStep: (input) => {
      const model = modelOf(input.agent);
      if (!model) return agentStepActivity(input)(input);
      return slots.call(input.agent, model, tokenEstimate(input.agent, [input.input, input.transcript]), {
        once: () => agentStepActivity(input, 'once')(input),
        withRetries: () => agentStepActivity(input)(input),
      });
    },
    executeRegion: (region) => regionActivity(region)({ runId, region }),
    isCancellation,
  };
}

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

/** A pure region as one local activity, named in the Web UI by its nodes. */
function regionActivity(region: PureRegion): PureRegionActivity {
  const summary = region.nodes.map((n) => `${n.title} (${n.id})`).join(' → ');
  return proxyLocalActivities<Record<string, PureRegionActivity>>({
    ...pureRegionOptions(region.nodes.length),
    summary,
  })[PURE_REGION_ACTIVITY] as PureRegionActivity;
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
