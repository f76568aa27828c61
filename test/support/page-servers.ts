import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Web pages on loopback, and a local stand-in for Jina Reader that, like the real service, fetches
 * the page named in its path and answers in Jina's JSON. With it a test sees which page a reader
 * node really made someone fetch: every connection to a page server is counted.
 */

export interface PageServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** TCP connections accepted so far (a connection counts even if no request follows). */
  readonly connections: number;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closer(server: Server): () => Promise<void> {
  return () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
}

/** A page answering every GET with `text`. */
export async function startPageServer(text: string): Promise<PageServer> {
  let connections = 0;
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(text));
  server.on('connection', () => connections++);
  const url = await listen(server);
  return {
    url,
    get connections() {
      return connections;
    },
    close: closer(server),
  };
}

/** Jina Reader's protocol: `GET /<page URL>` → `{data: {title, content}}`; pages on loopback only. */
export async function startFetchingReader(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    void (async () => {
      const page = new URL((req.url ?? '/').slice(1));
      if (page.hostname !== '127.0.0.1') {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ code: 400, readableMessage: 'tests fetch loopback pages only' }));
        return;
      }
      const text = await (await fetch(page, { signal: AbortSignal.timeout(10_000) })).text();
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ code: 200, status: 20000, data: { title: page.pathname, content: text, url: page.href } }),
        );
    })().catch((err: unknown) => res.writeHead(502).end(String(err)));
  });
  return { url: await listen(server), close: closer(server) };
}
