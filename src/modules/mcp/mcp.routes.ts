import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from '../../zod';
import { RequestValidationError } from '../../errors';
import { NO_BODY, readJsonBody } from '../../http/json-body';
import { defineRoute, type MountableRoute } from '../../http/route';

/** The MCP SDK loads with the first MCP request, not with every api that starts (about 0.4 CPU-s). */
const sdk = () => ({
  ...(require('./mcp-protocol') as typeof import('./mcp-protocol')),
  ...(require('@modelcontextprotocol/sdk/server/streamableHttp.js') as {
    StreamableHTTPServerTransport: typeof StreamableHTTPServerTransport;
  }),
});
import type { WorkflowTools } from './workflow-tools.service';

const JsonRpcMessage = z
  .looseObject({
    jsonrpc: z.literal('2.0'),
    method: z.string().optional(),
    id: z.union([z.string(), z.number()]).optional(),
  })
  .openapi('McpJsonRpcMessage', {
    description: 'A JSON-RPC 2.0 message of the Model Context Protocol (or a batch of them)',
  });

/**
 * `POST /api/mcp`: Spur's MCP server over streamable HTTP, stateless (no session: any api replica
 * answers any request). Behind the gate like every route, so it needs an API key when keys are set.
 * The body is read here within SPUR_MAX_JSON_BYTES, then the SDK's transport answers: JSON-RPC
 * results as a server-sent event stream, which carries a call's progress notifications too.
 */
export function mcpRoutes(tools: WorkflowTools, maxJsonBytes: number): MountableRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/mcp',
      permission: 'run',
      audit: { action: 'mcp.call' },
      summary: 'Model Context Protocol server: published workflows as tools (streamable HTTP)',
      description:
        'Speaks MCP over streamable HTTP in stateless mode (`initialize`, `tools/list`, `tools/call`). Send `Accept: application/json, text/event-stream`. Published workflows (`PUT /wf/{workflow_id}/mcp/`) are the tools.',
      tags: ['mcp'],
      rawBody: {
        contentTypes: ['application/json'],
        schema: z.union([JsonRpcMessage, z.array(JsonRpcMessage)]),
        description: 'JSON-RPC request, notification or batch',
      },
      response: {
        contentType: 'text/event-stream',
        description: 'JSON-RPC responses and notifications as server-sent events (202 with no body for notifications)',
      },
      errors: [401, 413],
      handler: async (_input, ctx) => {
        const body = await readJsonBody(ctx, maxJsonBytes);
        if (body === NO_BODY)
          throw new RequestValidationError([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
        const { workflowToolServer, StreamableHTTPServerTransport: Transport } = sdk();
        const server = workflowToolServer(tools);
        const transport = new Transport({ sessionIdGenerator: undefined });
        // The transport writes the answer itself; Koa must not.
        ctx.respond = false;
        ctx.res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(ctx.req, ctx.res, body);
      },
    }),
  ];
}
