import type { McpToolInfo } from './mcp-client.js';

/** How long a run reuses a server's tool list, and how many lists a worker keeps. */
const TTL_MS = 10 * 60 * 1000;
const MAX_ENTRIES = 500;

const cache = new Map<string, { tools: McpToolInfo[]; at: number }>();

/**
 * A server's tool list, listed once per run and server on this worker (an agent's every model
 * call offers the tools; a node checks its tool): a list changes rarely, and a run that started
 * with one set of tools keeps seeing it. A worker that restarts lists again.
 */
export async function toolsOfRun(
  runId: string,
  serverKey: string,
  list: () => Promise<McpToolInfo[]>,
  now: () => number = Date.now,
): Promise<McpToolInfo[]> {
  const key = `${runId}\n${serverKey}`;
  const hit = cache.get(key);
  if (hit && now() - hit.at < TTL_MS) return hit.tools;
  const tools = await list();
  if (cache.size >= MAX_ENTRIES) {
    // Oldest first: Map keeps insertion order.
    const oldest = cache.keys().next().value;
    if (oldest !== undefined) cache.delete(oldest);
  }
  cache.delete(key);
  cache.set(key, { tools, at: now() });
  return tools;
}
