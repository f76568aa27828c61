import { toolName } from '../../../engine/agent-loop';
import type { GraphNode, ToolRoute } from '../../../engine/run-contract';
import { NodeExecutionError } from '../../errors.js';
import { McpServerConfig } from '../../mcp/mcp-config.js';
import type { McpToolInfo } from '../../mcp/mcp-client.js';
import { serverTools } from '../../mcp/mcp-tool-node.js';
import type { NodeExecutionContext } from '../../types.js';
import type { ToolSpec } from '../llm/types.js';

const MAX_DESCRIPTION = 1024;

/** A server's input schema as function parameters: always an object (providers refuse anything else). */
function parametersOf(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = schema.properties;
  return {
    ...schema,
    type: 'object',
    properties: properties !== null && typeof properties === 'object' && !Array.isArray(properties) ? properties : {},
  };
}

/**
 * The functions an MCP server node offers an agent: its configured `tool`, named after the node's
 * title like any tool, or (no `tool`) every tool the server lists, under its own name (the node's
 * title before it when another tool has that name). Each comes with the server's own input schema
 * and a route binding the name to the node and the MCP tool, so a call's arguments are only ever
 * the tool's arguments: the model picks a name, never the server, its headers or its credentials.
 */
export async function mcpToolSpecs(
  node: GraphNode,
  taken: Set<string>,
  ctx: NodeExecutionContext,
): Promise<{ specs: ToolSpec[]; routes: Array<[string, ToolRoute]> }> {
  const settings = McpServerConfig.safeParse(node.config);
  if (!settings.success) throw new NodeExecutionError(`Tool '${node.title}' has an invalid MCP server config`);
  const listed = await serverTools(settings.data, ctx);
  const only = settings.data.tool.trim();
  const chosen = only ? listed.filter((t) => t.name === only) : listed;
  if (only && chosen.length === 0)
    throw new NodeExecutionError(`Tool '${node.title}': the MCP server has no tool '${only}'`);
  const specs: ToolSpec[] = [];
  const routes: Array<[string, ToolRoute]> = [];
  for (const tool of chosen) {
    const name = only ? toolName(node.title) : freeName(tool, node, taken);
    taken.add(name.toLowerCase());
    routes.push([name, { nodeId: node.id, config: { tool: tool.name } }]);
    specs.push({
      name,
      description: tool.description.slice(0, MAX_DESCRIPTION),
      parameters: parametersOf(tool.inputSchema),
    });
  }
  return { specs, routes };
}

function freeName(tool: McpToolInfo, node: GraphNode, taken: Set<string>): string {
  const own = toolName(tool.name);
  return taken.has(own.toLowerCase()) ? toolName(`${node.title}_${tool.name}`) : own;
}
