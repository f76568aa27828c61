import { createHash } from 'node:crypto';
import { type IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for an embeddings provider: a real HTTP server speaking OpenAI's
 * `POST /v1/embeddings` (also Azure's deployment path and Ollama's `/v1`). Vectors are
 * deterministic hashed bags of words, so a text is nearest to the texts that share its words and
 * tests can tell the right chunk. Requests are recorded; `delayMs` and `failNext` script outages.
 */
export interface EmbeddingRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: { model: string; input: string | string[]; dimensions?: number; encoding_format?: string };
  /** When the request arrived (ms since the epoch, this server's clock). */
  at: number;
}

export interface FakeEmbeddingsServer {
  url: string;
  requests: EmbeddingRequest[];
  /** Wait this long before every answer (keeps an index building). */
  delayMs: number;
  /** Answer this many next requests with this status (and these headers, e.g. Retry-After). */
  failNext(count: number, status: number, headers?: Record<string, string>): void;
  /**
   * The next `count` requests on connections that already served one find them closed (an idle
   * timeout passing as they arrive: a server closes every idle connection it has at once).
   */
  dropNextOnReusedConnections(count: number): void;
  /** Requests dropped so far by dropNextOnReusedConnections. */
  readonly dropped: number;
  close(): Promise<void>;
}

const DEFAULT_DIMENSIONS = 1536;

/** Words are lower-cased runs of letters and digits; each adds 1 at a position given by its hash. */
export function bagOfWordsVector(text: string, dimensions: number): number[] {
  const vector: number[] = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const slot = createHash('sha1').update(word).digest().readUInt32BE(0) % dimensions;
    vector[slot] = (vector[slot] as number) + 1;
  }
  if (!vector.some((v) => v > 0)) vector[0] = 1;
  const norm = Math.sqrt(vector.reduce((s, v) => s + v * v, 0));
  return vector.map((v) => v / norm);
}

export async function startFakeEmbeddingsServer(): Promise<FakeEmbeddingsServer> {
  const requests: EmbeddingRequest[] = [];
  const failures: { status: number; headers: Record<string, string> }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const state = { delayMs: 0, dropReused: 0, dropped: 0 };
  const served = new WeakSet<object>();
  const server = createServer((req, res) => {
    const at = Date.now();
    if (state.dropReused > 0 && served.has(req.socket)) {
      state.dropReused -= 1;
      state.dropped += 1;
      req.socket.destroy();
      return;
    }
    served.add(req.socket);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      let body: EmbeddingRequest['body'];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as EmbeddingRequest['body'];
      } catch {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'bad json' } }));
        return;
      }
      requests.push({ path, headers: req.headers, body, at });
      const answer = () => {
        const failure = path.endsWith('/embeddings') ? failures.shift() : { status: 404, headers: {} };
        if (failure) {
          const { status } = failure;
          res.writeHead(status, { 'content-type': 'application/json', ...failure.headers }).end(
            JSON.stringify({
              error: { message: `fake error ${status}`, type: 'invalid_request_error', code: null, param: null },
            }),
          );
          return;
        }
        const inputs = Array.isArray(body.input) ? body.input : [body.input];
        const dimensions = body.dimensions ?? DEFAULT_DIMENSIONS;
        const data = inputs.map((text, index) => {
          const vector = bagOfWordsVector(String(text), dimensions);
          const embedding =
            body.encoding_format === 'float' ? vector : Buffer.from(new Float32Array(vector).buffer).toString('base64');
          return { object: 'embedding', index, embedding };
        });
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(
            JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }),
          );
      };
      if (state.delayMs > 0) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, state.delayMs);
        timers.add(timer);
      } else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    failNext(count, status, headers = {}) {
      for (let i = 0; i < count; i++) failures.push({ status, headers });
    },
    dropNextOnReusedConnections(count: number) {
      state.dropReused = count;
    },
    get dropped() {
      return state.dropped;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
