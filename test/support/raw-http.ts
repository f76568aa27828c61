import http from 'node:http';

export interface RawRequest {
  method: string;
  /** Sent byte for byte: no URL normalisation, so `..`, `%2e%2e` and bad escapes reach the server as written. */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /**
   * The server cut the body after answering the status: a file deleted while it was being
   * streamed (the fuzz test sends such pairs at once) can only end that way over HTTP/1.1.
   */
  truncated?: boolean;
}

/**
 * A bare HTTP/1.1 client for requests fetch would refuse or rewrite (fetch resolves `..` in URLs
 * and sets its own Content-Type for FormData). Never throws on a status; rejects on a connection
 * error before the status or when no answer came within `timeoutMs`, which a hang-free server
 * never hits; a body cut after the status resolves with `truncated`.
 */
export function rawClient(baseUrl: string, timeoutMs = 30_000) {
  // `req.path` follows the base URL's path; a bare origin (`http://host:port`) has none.
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  return {
    request(req: RawRequest): Promise<RawReply> {
      return new Promise((resolve, reject) => {
        const body =
          req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
        const headers = { ...(req.headers ?? {}), ...(body ? { 'content-length': String(body.length) } : {}) };
        // A redirect echoes the (escaped, so up to 3× longer) URL in Location: read headers of any size.
        const options = {
          host: url.hostname,
          port: url.port,
          method: req.method,
          path: `${url.pathname.replace(/\/$/, '')}${req.path}`,
          headers,
          agent,
          maxHeaderSize: 1 << 20,
        };
        const out = http.request(options, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on('error', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks),
              truncated: true,
            }),
          );
        });
        out.setTimeout(timeoutMs, () =>
          out.destroy(new Error(`no answer within ${timeoutMs} ms: ${req.method} ${req.path.slice(0, 200)}`)),
        );
        out.on('error', reject);
        out.end(body);
      });
    },
    close(): void {
      agent.destroy();
    },
  };
}

export type RawClient = ReturnType<typeof rawClient>;
