import { toolName } from '../../../engine/agent-loop';
import type { AgentStepResult, AgentTurn, GraphNode, ToolRoute } from '../../../engine/run-contract';
import { DEFAULT_OUTPUT_JSON_SCHEMA } from '../../base-config.js';
import type { NodeExecutionContext, NodeInput } from '../../types.js';
import { outputSchemaFor, replyToOutput, validatedOutput } from '../llm/json-output.js';
import { buildMessages, jsonInstruction } from '../llm/messages.js';
import { type LlmCallConfig, callModel, jsonMode, prepareModel, stripReasoning } from '../llm/single-call.js';
import type { ChatMessage, ToolSpec } from '../llm/types.js';
import { mcpToolSpecs } from './mcp-tool-specs.js';
import { ROUTED_TOOL_TYPES, toolFields, toolSpec } from './tool-specs.js';

/** The output field the agent fills itself: the model is not asked for it. */
const TOOL_CALLS = 'tool_calls';

/** The output schema as the model sees it: without `tool_calls`. */
function schemaForModel(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = schema.properties;
  if (properties === null || typeof properties !== 'object' || !(TOOL_CALLS in properties)) return schema;
  const { [TOOL_CALLS]: _dropped, ...rest } = properties as Record<string, unknown>;
  const required = Array.isArray(schema.required) ? schema.required.filter((r) => r !== TOOL_CALLS) : schema.required;
  return { ...schema, properties: rest, ...(required !== undefined ? { required } : {}) };
}

function transcriptMessages(transcript: AgentTurn[]): ChatMessage[] {
  return transcript.map((turn): ChatMessage =>
    turn.role === 'assistant'
      ? { role: 'assistant', content: turn.content, toolCalls: turn.toolCalls }
      : {
          role: 'tool',
          toolCallId: turn.toolCallId,
          content: typeof turn.content === 'string' ? turn.content : JSON.stringify(turn.content),
        },
  );
}

/**
 * The functions offered: each child node as one (named after its title), then each MCP server
 * node's tools, routed to it by name. The servers are listed once per run (mcp-tool-cache.ts).
 */
async function offeredTools(
  tools: GraphNode[],
  ctx: NodeExecutionContext,
): Promise<{ specs: ToolSpec[]; routes: Record<string, ToolRoute> }> {
  const plain = tools.filter((t) => !ROUTED_TOOL_TYPES.has(t.node_type));
  const specs = plain.map(toolSpec);
  const taken = new Set(plain.map((t) => toolName(t.title).toLowerCase()));
  const routes: Array<[string, ToolRoute]> = [];
  for (const node of tools.filter((t) => ROUTED_TOOL_TYPES.has(t.node_type))) {
    const offered = await mcpToolSpecs(node, taken, ctx);
    specs.push(...offered.specs);
    routes.push(...offered.routes);
  }
  // fromEntries defines own properties: a tool a server names `__proto__` stays a plain name.
  return { specs, routes: Object.fromEntries(routes) };
}

/**
 * One model call of an agent: the prompt (as a SingleLLMCall builds it) plus the turns so far,
 * with the tools offered. A reply with tool calls is handed back for the workflow to run them; a
 * reply without is the node's output: the parsed answer plus `tool_calls`, every assistant and
 * tool turn as JSON text.
 */
export async function agentModelStep(
  config: LlmCallConfig,
  tools: GraphNode[],
  input: NodeInput,
  transcript: AgentTurn[],
  ctx: NodeExecutionContext,
): Promise<AgentStepResult> {
  const output = outputSchemaFor(config.output_json_schema.trim() || DEFAULT_OUTPUT_JSON_SCHEMA);
  const schema = schemaForModel(output.schema);
  const messages = [
    ...(await buildMessages(config, input, jsonInstruction(schema), ctx)),
    ...transcriptMessages(transcript),
  ];
  const prepared = await prepareModel(config, ctx);
  const offered = await offeredTools(tools, ctx);
  const reply = await callModel(prepared, messages, { ...jsonMode(prepared, schema), tools: offered.specs }, ctx);
  if (reply.toolCalls && reply.toolCalls.length > 0) {
    // The workflow holds no node types: it learns here which fields each tool lets the model set.
    return {
      kind: 'tool_calls',
      content: reply.text,
      toolCalls: reply.toolCalls,
      toolFields: Object.fromEntries(tools.map((t) => [t.id, toolFields(t)])),
      ...(Object.keys(offered.routes).length > 0 ? { toolRoutes: offered.routes } : {}),
    };
  }
  // Parsed against what the model was asked for (so a plain-text answer still fits `{output}`),
  // then checked whole once `tool_calls` is in.
  const answer = replyToOutput(
    stripReasoning(reply.text, prepared.limits?.reasoning_separator),
    outputSchemaFor(JSON.stringify(schema)),
  );
  return {
    kind: 'answer',
    output: validatedOutput({ ...answer, [TOOL_CALLS]: transcript.map((t) => JSON.stringify(t)) }, output),
  };
}
