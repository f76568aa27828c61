import { fixedOutputConfig } from '../base-config.js';
import { NodeExecutionError } from '../errors.js';
import { openObject } from '../shared-models.js';
import type { NodeExecutionContext, NodeInput, NodeTypeDefinition } from '../types.js';
import { toolArguments } from './mcp-arguments.js';
import type { McpToolInfo } from './mcp-client.js';

/**
 * The MCP SDK (and its protocol schemas) loads on the first MCP call, not in every api and worker
 * that starts: about 0.4 CPU-s of module loading a process without MCP nodes never needs.
 */
const mcpClient = () => require('./mcp-client.js') as typeof import('./mcp-client.js');
import { mcpServerFields } from './mcp-config.js';
import { McpToolOutput, type McpToolOutputValue, errorText, toolOutput } from './mcp-result.js';
import { type McpServerSettings, mcpTarget, serverKey } from './mcp-target.js';
import { toolsOfRun } from './mcp-tool-cache.js';

/**
 * The `_meta` key a call carries: the same value on every retry of one execution (the workflow,
 * its run and the activity), so a server that records it can tell a retried call from a new one.
 */
export const CALL_ID_META = 'spur/call_id';

const config = fixedOutputConfig(McpToolOutput, mcpServerFields);

function findTool(tools: McpToolInfo[], name: string, url: URL): McpToolInfo {
  const tool = tools.find((t) => t.name === name);
  if (tool) return tool;
  const listed = tools.map((t) => t.name).join(', ') || 'none';
  throw new NodeExecutionError(`MCP server ${url.origin} has no tool '${name}' (it lists: ${listed.slice(0, 300)})`);
}

/** A server's tools, listed once per run (mcp-tool-cache.ts); used by agents to offer them too. */
export async function serverTools(settings: McpServerSettings, ctx: NodeExecutionContext): Promise<McpToolInfo[]> {
  const target = await mcpTarget(settings, ctx);
  return toolsOfRun(ctx.runId, serverKey(settings), () =>
    mcpClient().withMcpClient(target, ctx.fetch, ctx.signal, (client, options) =>
      mcpClient().listMcpTools(client, options),
    ),
  );
}

async function callTool(cfg: McpServerSettings & { tool: string }, input: NodeInput, ctx: NodeExecutionContext) {
  const name = cfg.tool.trim();
  if (!name) throw new NodeExecutionError('tool is required: the name of the MCP tool to call');
  const target = await mcpTarget(cfg, ctx);
  const key = serverKey(cfg);
  return mcpClient().withMcpClient(target, ctx.fetch, ctx.signal, async (client, options) => {
    const tools = await toolsOfRun(ctx.runId, key, () => mcpClient().listMcpTools(client, options));
    const tool = findTool(tools, name, target.url);
    // A hint the server gives: only a tool it declares read-only runs in a dry run (an eval).
    if (!tool.readOnly) ctx.actingFromHere?.();
    const result = await client.callTool(
      {
        name,
        arguments: toolArguments(input, tool.inputSchema),
        ...(ctx.callKey ? { _meta: { [CALL_ID_META]: ctx.callKey } } : {}),
      },
      undefined,
      // A server's progress notifications show the call is alive: they keep the activity's heartbeat.
      { ...options, onprogress: () => ctx.heartbeat(), resetTimeoutOnProgress: true },
    );
    // The server answered: its error is its verdict on these arguments, not worth a retry.
    if (result.isError) throw new NodeExecutionError(`MCP tool '${name}' failed: ${errorText(result)}`);
    return storedAsFiles(toolOutput(result), ctx);
  });
}

/** Images, audio and blobs become run files (their paths in the content), as run inputs' files do. */
async function storedAsFiles(output: McpToolOutputValue, ctx: NodeExecutionContext): Promise<McpToolOutputValue> {
  const content = await Promise.all(
    output.content.map(async (item) => {
      const { data_uri: dataUri, ...rest } = item;
      if (typeof dataUri !== 'string' || !ctx.storeFile) return item;
      const file = await ctx.storeFile(dataUri);
      return file === null ? item : { ...rest, file };
    }),
  );
  return { ...output, content };
}

/**
 * Calls one tool of an MCP server (streamable HTTP or SSE) with the node's input as its
 * arguments, through the outbound client; its output is the result's text, JSON and content.
 * As an agent's tool it offers the server's tools with their own input schemas (tool-specs.ts).
 */
export const mcpToolNode: NodeTypeDefinition<typeof config> = {
  name: 'MCPToolNode',
  displayName: 'MCP Tool',
  description: 'Calls a tool of a Model Context Protocol server',
  category: 'Tools',
  visualTag: { acronym: 'MCP', color: '#6E56CF' },
  config,
  input: openObject(),
  output: McpToolOutput,
  execute: (cfg, input, ctx) => callTool(cfg, input, ctx),
};
