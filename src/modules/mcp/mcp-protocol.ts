import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { NotFoundError, SpurError } from '../../errors';
import { InvalidToolArguments, type WorkflowToolResult, type WorkflowTools } from './workflow-tools.service';

/** The `_meta` key naming the run a call started, in every call's result. */
export const RUN_ID_META = 'spur/run_id';

const SERVER_INFO = { name: 'spur', version: '1.0.0' };

function resultOf(outcome: WorkflowToolResult): CallToolResult {
  const _meta = { [RUN_ID_META]: outcome.runId };
  switch (outcome.kind) {
    case 'done':
      return {
        content: [{ type: 'text', text: JSON.stringify(outcome.outputs) }],
        structuredContent: outcome.outputs,
        _meta,
      };
    case 'failed':
      return {
        isError: true,
        content: [{ type: 'text', text: `Run ${outcome.runId} failed: ${outcome.message}` }],
        _meta,
      };
    case 'running':
      // Past the wait: the run goes on in Temporal and the client follows it over the REST api.
      return {
        content: [
          {
            type: 'text',
            text: `Run ${outcome.runId} is still going (${outcome.status}); poll /api/run/${outcome.runId}/status/`,
          },
        ],
        structuredContent: { run_id: outcome.runId, status: outcome.status },
        _meta,
      };
  }
}

/**
 * Spur's MCP server for one request (stateless streamable HTTP: a fresh server per POST, as the
 * SDK's stateless mode works): tools/list lists the published workflows, tools/call runs one.
 * A client that sends a progress token gets a progress notification per finished node.
 */
export function workflowToolServer(tools: WorkflowTools): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await tools.list() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const token = request.params._meta?.progressToken;
    const progress =
      token === undefined
        ? undefined
        : (done: number, total: number, message: string) =>
            extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: done, total, message },
            });
    try {
      return resultOf(await tools.call(request.params.name, request.params.arguments ?? {}, progress));
    } catch (err) {
      if (err instanceof NotFoundError || err instanceof InvalidToolArguments)
        throw new McpError(ErrorCode.InvalidParams, err.message);
      // The client's mistake or a dependency's outage, in words it can act on; anything else is a JSON-RPC error.
      if (err instanceof SpurError) return { isError: true, content: [{ type: 'text', text: err.message }] };
      throw err;
    }
  });
  return server;
}
