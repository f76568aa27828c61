import type { GraphLevel } from './graph';
import type { NodeState } from './node-inputs';
import { ENGINE_NODE_TYPES } from './node-kinds';
import { failureUsage } from './failure-usage';
import {
  type AgentStepResult,
  type AgentToolCall,
  type AgentTurn,
  type GraphNode,
  type NodeOutput,
  type TokenUsage,
  type ToolFields,
  type ToolRoute,
  addUsage,
} from './run-contract';
import type { CompositeResult, StepRunner } from './composite';
import { refusalMessage, splitToolArguments } from './tool-arguments';

/** A tool's function name: its title with what function names may not hold replaced (OpenAI: [A-Za-z0-9_-]{1,64}). */
export function toolName(title: string): string {
  return title.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'tool';
}

function findTool(tools: GraphNode[], name: string): GraphNode | undefined {
  const wanted = name.toLowerCase();
  return (
    tools.find((t) => toolName(t.title).toLowerCase() === wanted) ?? tools.find((t) => t.title.toLowerCase() === wanted)
  );
}

function parseArguments(text: string): Record<string, unknown> | string {
  try {
    const value: unknown = JSON.parse(text || '{}');
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : 'the arguments are not a JSON object';
  } catch {
    return 'the arguments are not valid JSON';
  }
}

/** The model calls an AgentNode may make: its `max_iterations`, 10 when absent or not a number (PySpur's default). */
export function agentMaxIterations(config: Record<string, unknown>): number {
  return Math.max(1, Number(config.max_iterations ?? 10) || 10);
}

/**
 * AgentNode as durable steps: each model call and each tool call is a step of
 * its own, so a worker that dies mid-loop resumes after the last completed one. Tools are the
 * agent's child nodes. A call's arguments are the tool's input; only its node type's settable
 * fields replace stored config values (PySpur lets the model write the whole config, code and URLs
 * included; model output is untrusted here). A tool that is a HumanInterventionNode pauses the run
 * like any pause. The loop ends at a reply without tool calls, or fails after `max_iterations`
 * model calls.
 */
export async function runAgent(
  steps: StepRunner,
  level: GraphLevel,
  node: GraphNode,
  input: Record<string, unknown>,
): Promise<CompositeResult> {
  const tools = level.children.get(node.id)?.nodes ?? [];
  const maxIterations = agentMaxIterations(node.config);
  const transcript: AgentTurn[] = [];
  const calls: Record<string, unknown[]> = {};
  let usage: TokenUsage | undefined;
  for (let iteration = 1; iteration <= maxIterations; iteration++) {
    let step: AgentStepResult;
    try {
      step = await steps.agentStep({
        runId: steps.runId,
        agent: node,
        tools,
        input,
        transcript: [...transcript],
        iteration,
      });
    } catch (err) {
      if (steps.isCancellation(err)) throw err;
      // The failed call and the ones before it were paid for: the node's usage keeps them all.
      const error = steps.failureMessage(err);
      return { state: { status: 'FAILED', error }, history: calls, usage: addUsage(usage, failureUsage(err)) };
    }
    usage = addUsage(usage, step.usage);
    if (step.kind === 'answer') return { state: { status: 'COMPLETED', output: step.output }, history: calls, usage };
    transcript.push({ role: 'assistant', content: step.content, toolCalls: step.toolCalls });
    const offered = { fields: step.toolFields, routes: step.toolRoutes ?? {} };
    const results = await Promise.all(step.toolCalls.map((call) => runTool(steps, node, tools, call, offered)));
    for (const result of results) {
      transcript.push(result.turn);
      usage = addUsage(usage, result.usage);
      if (result.output !== undefined) (calls[result.turn.name] ??= []).push(result.output);
    }
    const failed = results.find((r) => r.failed);
    if (failed)
      return {
        state: { status: 'FAILED', error: `Tool '${failed.turn.name}' failed: ${String(failed.turn.content)}` },
        history: calls,
        usage,
      };
  }
  return {
    state: {
      status: 'FAILED',
      error: `Agent ${node.id} made ${maxIterations} model calls (max_iterations) without a final answer`,
    },
    history: calls,
    usage,
  };
}

interface ToolResult {
  turn: Extract<AgentTurn, { role: 'tool' }>;
  output?: NodeOutput | null;
  usage?: TokenUsage;
  failed?: boolean;
}

/** What the step offered: each tool node's fields, and the function names routed to nodes. */
interface OfferedTools {
  fields: Record<string, ToolFields>;
  routes: Record<string, ToolRoute>;
}

/**
 * The node a call names, and the call split into config and input. A routed name (an MCP server's
 * tool) takes every argument as input and its config from the stored one plus the route's; any
 * other tool is found by its title and its arguments split by the fields its node type lets the
 * model set. Routed nodes are not reachable by title.
 */
function resolveCall(
  tools: GraphNode[],
  call: AgentToolCall,
  args: Record<string, unknown>,
  { fields, routes }: OfferedTools,
): { tool: GraphNode; split: ReturnType<typeof splitToolArguments> } | undefined {
  const fieldsOf = (tool: GraphNode) => (Object.hasOwn(fields, tool.id) ? fields[tool.id] : undefined);
  if (Object.hasOwn(routes, call.name)) {
    const route = routes[call.name] as ToolRoute;
    const tool = tools.find((t) => t.id === route.nodeId);
    return tool && { tool, split: { config: { ...tool.config, ...route.config }, input: args } };
  }
  const tool = findTool(
    tools.filter((t) => !fieldsOf(t)?.routed),
    call.name,
  );
  return tool && { tool, split: splitToolArguments(tool, args, fieldsOf(tool)) };
}

async function runTool(
  steps: StepRunner,
  agent: GraphNode,
  tools: GraphNode[],
  call: AgentToolCall,
  offered: OfferedTools,
): Promise<ToolResult> {
  const reply = (content: NodeOutput | string, extra: Partial<ToolResult> = {}): ToolResult => ({
    turn: { role: 'tool', toolCallId: call.id, name: call.name, content },
    ...extra,
  });
  const args = parseArguments(call.arguments);
  const resolved = resolveCall(tools, call, typeof args === 'string' ? {} : args, offered);
  // Mistakes of the model are told to the model, which can correct itself on the next turn.
  if (!resolved) return reply(`Error: there is no tool named '${call.name}'`);
  if (typeof args === 'string') return reply(`Error: ${args}`);
  const { tool, split } = resolved;
  if ('refused' in split) return reply(refusalMessage(split.refused));
  const configured: GraphNode = { ...tool, id: `${tool.id}`, parent_id: agent.id, config: split.config };
  let state: NodeState;
  let usage: TokenUsage | undefined;
  if (tool.node_type === ENGINE_NODE_TYPES.humanIntervention && steps.pause) {
    state = await steps.pause(configured, split.input);
  } else {
    try {
      const result = await steps.execute(configured, split.input);
      state = { status: 'COMPLETED', output: result.output };
      usage = result.usage;
    } catch (err) {
      if (steps.isCancellation(err)) throw err;
      return reply(steps.failureMessage(err), { failed: true });
    }
  }
  if (state.status === 'COMPLETED') return reply(state.output ?? {}, { output: state.output, usage });
  if (state.status === 'CANCELED') return reply('The tool call was declined.', { output: null });
  return reply(state.error, { failed: true });
}
