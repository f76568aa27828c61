import assert from 'node:assert/strict';
import http from 'node:http';
import { RUN_EVENT_DATA } from '../../src/modules/runs/run-events.schemas';

export interface SseEvent {
  id: number;
  event: string;
  data: Record<string, any>;
  /** When this client parsed it (ms since the epoch). */
  receivedAt: number;
}

export interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: SseEvent[];
  /** Comment lines (`: keep-alive`) seen. */
  comments: string[];
  /** Resolves when the server ends the stream (or the connection breaks); true if the server ended it. */
  ended: Promise<boolean>;
  /** Resolves with the events once `predicate` holds for them; rejects after `timeoutMs` or if the stream ends first. */
  waitFor(predicate: (events: SseEvent[]) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  /** Disconnects (a client going away mid-stream). */
  close(): void;
  /** The body, when the answer was not a stream (an error). */
  body(): string;
}

/**
 * A small EventSource: GETs `url`, parses `id:`/`event:`/`data:` messages and comment lines as
 * they arrive, resolves once the response headers are in. `localAddress` picks the client's
 * loopback address (127.0.0.2…), to be another client to the server.
 */
export function openSse(
  url: string,
  headers: Record<string, string> = {},
  options: { localAddress?: string } = {},
): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { Accept: 'text/event-stream', ...headers }, ...options }, (res) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      let raw = '';
      let buffer = '';
      let closedByServer = false;
      const notify = () => waiters.forEach((w) => w());
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        raw += chunk;
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const message = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          parse(message, events, comments);
        }
        notify();
      });
      const ended = new Promise<boolean>((done) => {
        res.on('end', () => {
          closedByServer = true;
          done(true);
          notify();
        });
        res.on('close', () => {
          done(closedByServer);
          notify();
        });
        res.on('error', () => done(false));
      });
      let finished = false;
      void ended.then(() => (finished = true));
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        comments,
        ended,
        body: () => raw,
        close: () => req.destroy(),
        waitFor(predicate, timeoutMs = 60_000) {
          return new Promise((ok, fail) => {
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(
                new Error(
                  `SSE: condition not met in ${timeoutMs} ms; got ${events.map((e) => `${e.id}:${e.event}`).join(', ')}`,
                ),
              );
            }, timeoutMs);
            const check = () => {
              if (predicate(events)) {
                clearTimeout(timer);
                waiters.delete(check);
                ok(events);
              } else if (finished) {
                clearTimeout(timer);
                waiters.delete(check);
                fail(new Error(`SSE: stream ended first; got ${events.map((e) => `${e.id}:${e.event}`).join(', ')}`));
              }
            };
            waiters.add(check);
            setImmediate(check);
          });
        },
      });
    });
    req.on('error', reject);
  });
}

function parse(message: string, events: SseEvent[], comments: string[]): void {
  const fields: Record<string, string> = {};
  for (const line of message.split('\n')) {
    if (line.startsWith(':')) {
      comments.push(line.slice(1).trim());
      continue;
    }
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).replace(/^ /, '');
    fields[name] = name in fields ? `${fields[name]}\n${value}` : value;
  }
  if (fields.event === undefined) return;
  events.push({
    id: Number(fields.id),
    event: fields.event,
    data: JSON.parse(fields.data ?? 'null') as Record<string, any>,
    receivedAt: Date.now(),
  });
}

export const FINAL_EVENT_NAMES = ['run.completed', 'run.failed', 'run.canceled'];

/** Ids 1..N with no gap and no duplicate, every data valid for its event's schema, one final event, last. */
export function assertWholeStream(events: SseEvent[]): void {
  assert.deepEqual(
    events.map((e) => e.id),
    events.map((_, i) => i + 1),
    `ids in order without gaps: ${events.map((e) => e.id).join(',')}`,
  );
  for (const e of events) {
    const schema = RUN_EVENT_DATA[e.event as keyof typeof RUN_EVENT_DATA];
    assert.ok(schema, `known event ${e.event}`);
    const parsed = schema.safeParse(e.data);
    assert.ok(parsed.success, `${e.event} ${JSON.stringify(e.data)}: ${parsed.success ? '' : parsed.error.message}`);
  }
  assert.equal(events.filter((e) => FINAL_EVENT_NAMES.includes(e.event)).length, 1, 'one final event');
  assert.ok(FINAL_EVENT_NAMES.includes(events.at(-1)?.event ?? ''), 'the final event comes last');
}
