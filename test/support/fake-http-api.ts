import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake API received. */
export interface SeenRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Raw header lines as sent (a smuggled header shows here as a line of its own). */
  rawHeaders: string[];
  body: string;
  /** When it arrived (ms since the epoch, this server's clock). */
  at: number;
}

/** A scripted answer; `body` is sent as it is (a string) or as JSON. */
export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * A third-party HTTP API on loopback for HTTPRequestNode: records every request, answers the
 * answers scripted per path in order, then 200 with `{"method", "url", "body"}` as JSON.
 */
export interface FakeHttpApi {
  /** `http://127.0.0.1:<port>` */
  url: string;
  seen: SeenRequest[];
  script(path: string, ...answers: ScriptedAnswer[]): void;
  close(): Promise<void>;
}

export async function startFakeHttpApi(): Promise<FakeHttpApi> {
  const seen: SeenRequest[] = [];
  const scripts = new Map<string, ScriptedAnswer[]>();
  const server = http.createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = req.url ?? '/';
      seen.push({ method: req.method ?? '', url, headers: req.headers, rawHeaders: req.rawHeaders, body, at });
      const answer = scripts.get(new URL(url, 'http://x').pathname)?.shift() ?? {
        status: 200,
        body: { method: req.method, url, body },
      };
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? null);
      const type = typeof answer.body === 'string' ? 'text/plain' : 'application/json';
      res.writeHead(answer.status, { 'content-type': type, ...answer.headers }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    script: (path, ...answers) => scripts.set(path, [...(scripts.get(path) ?? []), ...answers]),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
