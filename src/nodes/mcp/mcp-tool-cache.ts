import type { McpToolInfo } from './mcp-client.js';

/** How long a run reuses a server's tool list, and how much a worker keeps. */
export interface ToolCacheLimits {
  ttlMs: number;
  maxEntries: number;
  /** The lists' total size as JSON: a server chooses how large its list is, the worker's memory is not its to fill. */
  maxBytes: number;
}

const LIMITS: ToolCacheLimits = { ttlMs: 10 * 60 * 1000, maxEntries: 500, maxBytes: 16 * 1024 * 1024 };

interface Entry {
  /** Pending while the first execution lists: the others of the run wait for that listing. */
  tools: Promise<McpToolInfo[]>;
  at: number;
  bytes: number;
}

/**
 * Tool lists by run and server, in one worker's memory. Entries leave when they expire, when the
 * count or the total size is over its limit (oldest first), and when their listing fails.
 */
export class ToolListCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly limits: ToolCacheLimits = LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  async tools(runId: string, serverKey: string, list: () => Promise<McpToolInfo[]>): Promise<McpToolInfo[]> {
    const key = `${runId}\n${serverKey}`;
    this.dropExpired();
    const hit = this.entries.get(key);
    if (hit) {
      try {
        return await hit.tools;
      } catch {
        // That listing failed in another execution (its session, its cancellation): list here.
      }
    }
    const entry: Entry = { tools: list(), at: this.now(), bytes: 0 };
    this.remove(key);
    this.entries.set(key, entry);
    this.shrink();
    try {
      const tools = await entry.tools;
      if (this.entries.get(key) === entry) this.account(key, entry, JSON.stringify(tools).length);
      return tools;
    } catch (err) {
      if (this.entries.get(key) === entry) this.remove(key);
      throw err;
    }
  }

  private account(key: string, entry: Entry, bytes: number) {
    if (bytes > this.limits.maxBytes) {
      this.remove(key); // larger than the whole cache: used by this execution only
      return;
    }
    entry.bytes = bytes;
    this.bytes += bytes;
    this.shrink();
  }

  /** Oldest first (the Map keeps insertion order, and an entry is always inserted anew); never the newest. */
  private shrink() {
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) break;
      this.remove(oldest);
    }
  }

  private dropExpired() {
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (now - entry.at < this.limits.ttlMs) break; // the rest are younger
      this.remove(key);
    }
  }

  private remove(key: string) {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.bytes;
    this.entries.delete(key);
  }
}

const cache = new ToolListCache();

/**
 * A server's tool list, listed once per run and server on this worker (an agent's every model
 * call offers the tools; a node checks its tool), even by executions running side by side: a
 * list changes rarely, and a run that started with one set of tools keeps seeing it. A worker
 * that restarts lists again.
 */
export function toolsOfRun(
  runId: string,
  serverKey: string,
  list: () => Promise<McpToolInfo[]>,
): Promise<McpToolInfo[]> {
  return cache.tools(runId, serverKey, list);
}
