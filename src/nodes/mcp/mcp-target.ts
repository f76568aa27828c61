import type { z } from 'zod';
import { NodeExecutionError } from '../errors.js';
import type { NodeExecutionContext } from '../types.js';
import type { McpTarget } from './mcp-client.js';
import type { McpServerConfig } from './mcp-config.js';
import { mcpHeaders } from './mcp-credentials.js';

export type McpServerSettings = Pick<z.output<typeof McpServerConfig>, 'server_url' | 'transport' | 'headers'>;

/** The server a node's config names, its credentials read for this execution. */
export async function mcpTarget(
  config: McpServerSettings,
  ctx: Pick<NodeExecutionContext, 'secret'>,
): Promise<McpTarget> {
  let url: URL;
  try {
    url = new URL(config.server_url.trim());
  } catch {
    throw new NodeExecutionError(`server_url is not a URL: '${config.server_url.slice(0, 200)}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new NodeExecutionError(`server_url must be http or https, not ${url.protocol}`);
  return { url, transport: config.transport, headers: await mcpHeaders(url, config.headers, ctx.secret) };
}

/** Identifies a server's tool list within a run: the same URL over the same transport with the same credentials. */
export function serverKey(config: McpServerSettings): string {
  return JSON.stringify([config.server_url.trim(), config.transport, config.headers]);
}
