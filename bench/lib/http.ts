// A minimal JSON client on node:http with a keep-alive agent: every request reuses a pooled
// connection, so latency measures the api, not TCP setup (fair to any client that pools).
import http from 'node:http';

export interface JsonReply {
  status: number;
  body: unknown;
}

export interface JsonClient {
  post(path: string, body: unknown): Promise<JsonReply>;
  put(path: string, body: unknown): Promise<JsonReply>;
  get(path: string): Promise<JsonReply>;
  /** Requests re-sent because a pooled idle connection had been closed by the server (not failures). */
  readonly staleRetries: number;
  close(): void;
}

/** `headers` go with every request (an API key: `{ authorization: 'Bearer …' }`). */
export function jsonClient(baseUrl: string, maxSockets = 64, headers: Record<string, string> = {}): JsonClient {
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });

  let staleRetries = 0;

  /**
   * Node's documented keep-alive race: the server may close an idle pooled connection just as a
   * request goes out on it; the request then fails with ECONNRESET before the server read it.
   * Only that case is retried (once, on a fresh connection), and counted.
   */
  async function request(method: string, path: string, body?: unknown): Promise<JsonReply> {
    try {
      return await send(method, path, body);
    } catch (err) {
      if (!(err instanceof StaleSocketError)) throw err;
      staleRetries++;
      return send(method, path, body);
    }
  }

  function send(method: string, path: string, body?: unknown): Promise<JsonReply> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path: `${base.pathname.replace(/\/$/, '')}${path}`,
          headers: {
            ...headers,
            ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              if (text) parsed = JSON.parse(text);
            } catch {
              // not JSON: keep the text
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) =>
        reject(req.reusedSocket && err.code === 'ECONNRESET' ? new StaleSocketError(err.message) : err),
      );
      req.end(payload);
    });
  }

  return {
    post: (path, body) => request('POST', path, body),
    put: (path, body) => request('PUT', path, body),
    get: (path) => request('GET', path),
    get staleRetries() {
      return staleRetries;
    },
    close: () => agent.destroy(),
  };
}

class StaleSocketError extends Error {}
