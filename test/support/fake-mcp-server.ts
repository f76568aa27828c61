import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A real MCP server on loopback, built with the official SDK (not a stub): streamable HTTP
 * (stateless, at `/mcp`) and the older SSE transport (`GET /sse`, then `POST /messages`). Its tools:
 * `add` {a, b} (structured `{sum}`), `lookup` {key} (text; the only one declared `readOnlyHint`), `fail` (an error result in the server's
 * words), `picture` (an image), `slow` {id} (answers once `release(id)` is called); started with `{ relay: true }`, also `relay`
 * (the JSON text of whatever `relay(value)` set: what a hostile server may answer). Every call is
 * logged with its arguments, the headers it came with and its `_meta`, so tests count calls.
 */
export interface LoggedCall {
  tool: string;
  arguments: Record<string, unknown>;
  transport: 'streamable-http' | 'sse';
  authorization: string | undefined;
  meta: Record<string, unknown> | undefined;
  /** The call completed at the server (its answer was handed to the transport). */
  completed: boolean;
}

export interface FakeMcpServer {
  /** `http://127.0.0.1:<port>`; the streamable HTTP endpoint is `${url}/mcp`, SSE's `${url}/sse`. */
  url: string;
  calls: LoggedCall[];
  /** HTTP requests received, by path (a refused connection sends none). */
  requests: string[];
  /** tools/list requests answered. */
  listings: number;
  /** What the `relay` tool answers from now on, as JSON text. */
  relay(value: unknown): void;
  /** Answers the `slow` call with this id (now, or as soon as it arrives). */
  release(id: string): void;
  /** Resolves when a `slow` call with this id has arrived. */
  arrived(id: string): Promise<void>;
  close(): Promise<void>;
}

export const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/**
 * The path a request is served at: decoded, then its dot segments resolved, as many servers (and
 * the proxies in front of them) do, so `/tenantA/..%2Fmcp` is served by `/mcp`.
 */
function routeOf(pathname: string): string {
  try {
    return path.posix.normalize(decodeURIComponent(pathname));
  } catch {
    return pathname;
  }
}

export async function startFakeMcpServer(options: { relay?: boolean } = {}): Promise<FakeMcpServer> {
  const calls: LoggedCall[] = [];
  const requests: string[] = [];
  const releases = new Map<string, () => void>();
  const released = new Set<string>();
  const arrivals = new Map<string, () => void>();
  const arrivedPromises = new Map<string, Promise<void>>();
  const sseSessions = new Map<string, SSEServerTransport>();
  let listings = 0;
  let relayed: unknown = null;

  const arrival = (id: string) => {
    if (!arrivedPromises.has(id)) arrivedPromises.set(id, new Promise<void>((r) => arrivals.set(id, r)));
    return arrivedPromises.get(id) as Promise<void>;
  };

  function buildServer(req: IncomingMessage, transport: LoggedCall['transport']): McpServer {
    const server = new McpServer({ name: 'fake-tools', version: '1.0.0' });
    const log = (tool: string, args: Record<string, unknown>, meta: Record<string, unknown> | undefined) => {
      const call: LoggedCall = {
        tool,
        arguments: args,
        transport,
        authorization: req.headers.authorization,
        meta,
        completed: false,
      };
      calls.push(call);
      return call;
    };
    server.registerTool(
      'add',
      {
        description: 'Adds two numbers',
        inputSchema: { a: z.number(), b: z.number() },
        outputSchema: { sum: z.number() },
      },
      ({ a, b }, extra) => {
        const call = log('add', { a, b }, extra._meta);
        call.completed = true;
        return { content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } };
      },
    );
    server.registerTool(
      'lookup',
      { description: 'Looks a word up', inputSchema: { key: z.string() }, annotations: { readOnlyHint: true } },
      ({ key }, extra) => {
        const call = log('lookup', { key }, extra._meta);
        call.completed = true;
        return { content: [{ type: 'text', text: `definition of ${key}` }] };
      },
    );
    server.registerTool('fail', { description: 'Always fails', inputSchema: {} }, (_args, extra) => {
      log('fail', {}, extra._meta).completed = true;
      return { isError: true, content: [{ type: 'text', text: 'the lookup service is down for maintenance' }] };
    });
    server.registerTool('picture', { description: 'Draws a picture', inputSchema: {} }, (_args, extra) => {
      log('picture', {}, extra._meta).completed = true;
      return { content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }] };
    });
    if (options.relay)
      server.registerTool('relay', { description: 'Answers what the test set', inputSchema: {} }, (_args, extra) => {
        log('relay', {}, extra._meta).completed = true;
        return { content: [{ type: 'text', text: JSON.stringify(relayed) }] };
      });
    server.registerTool(
      'slow',
      { description: 'Answers when the test says so', inputSchema: { id: z.string() } },
      async ({ id }, extra) => {
        const call = log('slow', { id }, extra._meta);
        void arrival(id); // makes sure the resolver exists before it is called
        arrivals.get(id)?.();
        if (!released.has(id)) await new Promise<void>((r) => releases.set(id, r));
        call.completed = true;
        return { content: [{ type: 'text', text: `slow ${id} done` }] };
      },
    );
    return server;
  }

  async function readJson(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? JSON.parse(text) : undefined;
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push(url.pathname);
    const route = routeOf(url.pathname);
    if (route === '/mcp' && req.method === 'POST') {
      const body = await readJson(req);
      if ((body as { method?: string } | undefined)?.method === 'tools/list') listings++;
      // Stateless: a server and a transport per request, as the SDK's stateless example does.
      const server = buildServer(req, 'streamable-http');
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    if (route === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      sseSessions.set(transport.sessionId, transport);
      res.on('close', () => sseSessions.delete(transport.sessionId));
      await buildServer(req, 'sse').connect(transport);
      return;
    }
    if (route === '/messages' && req.method === 'POST') {
      const transport = sseSessions.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) {
        res.writeHead(404).end('no such session');
        return;
      }
      const body = await readJson(req);
      if ((body as { method?: string } | undefined)?.method === 'tools/list') listings++;
      await transport.handlePostMessage(req, res, body);
      return;
    }
    res.writeHead(404).end();
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    requests,
    get listings() {
      return listings;
    },
    relay(value) {
      relayed = value;
    },
    release(id) {
      released.add(id);
      releases.get(id)?.();
    },
    arrived: arrival,
    async close() {
      for (const id of releases.keys()) releases.get(id)?.();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
