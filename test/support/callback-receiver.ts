import { createHmac, timingSafeEqual } from 'node:crypto';
import { type IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real callback receiver on loopback: records every POST (raw body, headers) and answers with
 * the statuses scripted per path (then 200). Tests check signatures the way a user's server would.
 */
export interface ReceivedCallback {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: any;
  /** When the request arrived (ms since the epoch, this receiver's clock). */
  at: number;
}

export interface CallbackReceiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  received: ReceivedCallback[];
  /** Answers the next POSTs to `path` with these statuses, in order; `DROP` cuts the connection instead. */
  script(path: string, ...statuses: number[]): void;
  /** Keeps the next POST to `path` waiting for its answer until the returned function is called. */
  hold(path: string): () => void;
  /** Waits until `count` POSTs to `path` have arrived (a generous deadline: the machine is shared). */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<ReceivedCallback[]>;
  close(): Promise<void>;
}

/** A scripted "status" that cuts the connection without an answer (a network error for the sender). */
export const DROP = -1;

export async function startCallbackReceiver(): Promise<CallbackReceiver> {
  const received: ReceivedCallback[] = [];
  const scripts = new Map<string, number[]>();
  const holds = new Map<string, Promise<void>>();
  const server = createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks);
      const path = req.url ?? '/';
      let body: unknown = null;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = raw.toString('utf8');
      }
      received.push({ path, headers: req.headers, raw, body, at });
      const held = holds.get(path);
      holds.delete(path);
      await held;
      const status = scripts.get(path)?.shift() ?? 200;
      if (status === DROP) return void req.socket.destroy();
      // A 429 asks for the next try at once: the sender honours Retry-After.
      const headers = status === 429 ? { 'retry-after': '0' } : {};
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ status }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const of = (path: string) => received.filter((r) => r.path === path);
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    script: (path, ...statuses) => scripts.set(path, [...(scripts.get(path) ?? []), ...statuses]),
    hold(path) {
      let release = () => undefined as void;
      holds.set(path, new Promise<void>((resolve) => (release = resolve)));
      return () => release();
    },
    async waitFor(path, count, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (of(path).length < count) {
        if (Date.now() > deadline)
          throw new Error(`${path}: ${of(path).length} of ${count} callbacks after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return of(path);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What a receiver does: recompute `sha256=<hex HMAC>` of the raw body and compare in constant time. */
export function validSignature(secret: string, received: ReceivedCallback): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(received.raw).digest('hex')}`);
  const given = Buffer.from(String(received.headers['x-spur-signature'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}
