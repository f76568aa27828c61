import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { outboundStop } from '../../outbound/errors';
import type { OutboundFetch } from '../../outbound/outbound-fetch';
import type { McpTransport } from './mcp-config.js';
import { mcpFailure } from './mcp-errors.js';

/** Where an MCP server is and how to reach it; `headers` already hold the credentials' values. */
export interface McpTarget {
  url: URL;
  transport: McpTransport;
  headers: Record<string, string>;
}

/** One tool as the server lists it. */
export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The server declares the tool does not change its environment (`annotations.readOnlyHint`). */
  readOnly: boolean;
}

const CLIENT_INFO = { name: 'spur', version: '1.0.0' };

/**
 * A request may wait as long as its node may run: the activity's own timeout and cancellation
 * (`signal`) end it, not the SDK's 60-second default, which would cut a slow tool short.
 */
const NO_SDK_TIMEOUT_MS = 24 * 3600 * 1000;

/**
 * Both transports send every request through the outbound client (the SDK takes it as its
 * `fetch`), so the address policy, redirects rules and answer caps apply to MCP servers as to any
 * other server-side request: a refused address receives no connection.
 */
function transportFor(target: McpTarget, fetch: OutboundFetch): Transport {
  const options = { fetch, requestInit: { headers: target.headers } };
  return target.transport === 'sse'
    ? new SSEClientTransport(target.url, options)
    : new StreamableHTTPClientTransport(target.url, options);
}

/** Connects (initialize), runs `work`, and closes, whatever happens: one session per node execution. */
export async function withMcpClient<T>(
  target: McpTarget,
  fetch: OutboundFetch,
  signal: AbortSignal,
  work: (client: Client, options: { signal: AbortSignal; timeout: number }) => Promise<T>,
): Promise<T> {
  const client = new Client(CLIENT_INFO);
  const options = { signal, timeout: NO_SDK_TIMEOUT_MS };
  // The SSE transport's event source reports a failed fetch as an event with its message only:
  // the policy's refusal is kept here, so it fails the node as a refusal (not retried) either way.
  let stopped: Error | undefined;
  const watched: OutboundFetch = async (input, init) => {
    try {
      return await fetch(input, init);
    } catch (err) {
      stopped ??= outboundStop(err);
      throw err;
    }
  };
  try {
    await client.connect(transportFor(target, watched), options);
    return await work(client, options);
  } catch (err) {
    throw mcpFailure(target.url, stopped ?? err);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Every tool the server lists, following its pages. */
export async function listMcpTools(
  client: Client,
  options: { signal: AbortSignal; timeout: number },
): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  // A server that pages forever is cut off: 100 pages is far more tools than a model can use.
  for (let page = 0; page < 100; page++) {
    const listed = await client.listTools(cursor ? { cursor } : undefined, options);
    for (const tool of listed.tools)
      tools.push({
        name: tool.name,
        description: tool.description ?? tool.title ?? tool.name,
        inputSchema: tool.inputSchema as Record<string, unknown>,
        readOnly: tool.annotations?.readOnlyHint === true,
      });
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  return tools;
}
