import type { AgentStepInput, AgentStepResult } from '../../src/engine/run-contract';
import { AGENT_STEP_ACTIVITY, type AgentStepActivity } from '../../src/contracts/run-contract';
import { agentModelStep } from '../../src/nodes/ai/agent/agent-step';
import type { LlmCallConfig } from '../../src/nodes/ai/llm/single-call';
import { agentNode } from '../../src/nodes/ai/agent-node';
import type { NodeTypeDefinition } from '../../src/nodes/types';
import { type NodeSpan, inNodeSpan } from '../../src/telemetry/node-span';
import {
  type NodeActivityDeps,
  carryingUsage,
  externalizeOutput,
  refusedValueFailsNode,
  withNodeErrors,
} from './execute-node.activity';
import { activityNodeContext } from './node-context';
import { nodeAttempt } from './node-attempt';
import { releasingSlots } from './slot-release';

/** An agent's model call as its own activity (the loop and the tool calls are workflow code). */
export function createAgentActivities(deps: NodeActivityDeps): Record<typeof AGENT_STEP_ACTIVITY, AgentStepActivity> {
  return {
    // In a traced run each attempt of each model call of the agent is a span, its turn an attribute.
    [AGENT_STEP_ACTIVITY]: (input) =>
      releasingSlots(input.slots, () =>
        inNodeSpan(
          deps.tracer,
          nodeAttempt(input, input.agent, {
            name: `agent step ${input.agent.node_type}`,
            attributes: { 'spur.agent.iteration': input.iteration },
          }),
          (span) => agentStep(deps, input, span),
        ),
      ),
  };
}

async function agentStep(
  deps: NodeActivityDeps,
  { runId, agent, tools, input, transcript, budget }: AgentStepInput,
  span: NodeSpan | undefined,
): Promise<AgentStepResult> {
  const ctx = activityNodeContext(deps, runId, agent.id, agent.title, deps.values.limits.maxBytes, budget);
  span?.traceModelCalls(ctx, deps.prices);
  // The model sees plain values: the agent's input and the tools' outputs may be references.
  const [plainInput, plainTranscript] = await Promise.all([
    deps.values.resolve(input),
    deps.values.resolve(transcript),
  ]);
  let step: Awaited<ReturnType<typeof agentModelStep>>;
  try {
    step = await withNodeErrors(agentNode as unknown as NodeTypeDefinition, agent.config, ctx, (config) =>
      agentModelStep(config as unknown as LlmCallConfig, tools, plainInput, plainTranscript, ctx),
    );
    // Tool calls go on to the tools' nodes as their input: the model's arguments are checked as an output would be.
    const toolCalls = step;
    if (toolCalls.kind !== 'answer')
      await refusedValueFailsNode(() =>
        deps.values.refuseForeignRefs(toolCalls, `The tool calls of node '${agent.title}' (${agent.id})`),
      );
  } catch (err) {
    throw carryingUsage(err, ctx.usage());
  }
  const result =
    step.kind === 'answer'
      ? { ...step, output: await externalizeOutput(deps.values, runId, agent, step.output) }
      : step;
  const usage = ctx.usage();
  return usage ? { ...result, usage } : result;
}
