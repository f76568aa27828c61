import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadConfig } from '../../src/config/load-config';
import { OutboundLimitError } from '../../src/outbound/errors';
import { createOutboundFetch } from '../../src/outbound/outbound-fetch';
import { type BombEncoding, compressionBomb } from '../support/compression-bombs';
import { type Listener, listen } from '../support/counting-listener';

// The one outbound client against real servers on loopback (private addresses allowed, as in
// `npm run dev`): what it sends on a redirect, and where it stops reading an answer.

const MiB = 1024 * 1024;
const CAP = MiB;
const policy = loadConfig({
  SPUR_OUTBOUND_ALLOW_PRIVATE: 'true',
  SPUR_OUTBOUND_MAX_RESPONSE_BYTES: String(CAP),
}).outbound;
/** The production idle timeout (60 s): only the cap may stop a bomb, however loaded the host. */
const fetch = createOutboundFetch(policy);
/** Short, so the test of the idle cut-off does not wait the production minute. */
const IDLE_MS = 500;
const impatientFetch = createOutboundFetch({ ...policy, idleTimeoutMs: IDLE_MS });
const CAP_MESSAGE = /^the answer exceeded 1048576 bytes \(SPUR_OUTBOUND_MAX_RESPONSE_BYTES\)$/;

/** Reads a body to its end or its error: how many bytes the reader got, and the error. */
async function readAll(response: Response): Promise<{ bytes: number; error: unknown }> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes, error: undefined };
      bytes += value.length;
    }
  } catch (error) {
    return { bytes, error };
  }
}

const CREDENTIALS = {
  authorization: 'Bearer sk-secret',
  'x-api-key': 'anthropic-secret',
  'api-key': 'azure-secret',
  'x-goog-api-key': 'gemini-secret',
  cookie: 'session=secret',
};

describe('security: the outbound client', function () {
  // Past the idle timeout: a bomb the cap failed to stop ends in the idle error, not a mocha timeout.
  this.timeout(90_000);
  const listeners: Listener[] = [];
  const seen: IncomingHttpHeaders[] = [];
  let target: Listener;
  after(() => Promise.all(listeners.map((l) => l.close())));
  before(async () => {
    target = await listen((req, res) => {
      seen.push(req.headers);
      res.end('{"ok": true}');
    });
    listeners.push(target);
  });
  beforeEach(() => (seen.length = 0));

  /** A server that answers every request with a redirect to `to()` + its path. */
  async function redirector(to: () => string): Promise<Listener> {
    const l = await listen((req, res) => {
      if (req.url?.startsWith('/final')) {
        seen.push(req.headers);
        return void res.end('{"ok": true}');
      }
      res.writeHead(307, { location: `${to()}/final` });
      res.end();
    });
    listeners.push(l);
    return l;
  }

  it('strips Authorization, API-key headers and cookies on a redirect to another origin, and keeps the harmless ones', async () => {
    const from = await redirector(() => target.url);
    const res = await fetch(`${from.url}/start`, {
      method: 'POST',
      headers: { ...CREDENTIALS, accept: 'application/json', 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(res.status, 200);
    assert.equal(seen.length, 1, 'the other origin was asked once');
    const got = seen[0] as IncomingHttpHeaders;
    for (const name of Object.keys(CREDENTIALS)) assert.equal(got[name], undefined, `${name} reached the other origin`);
    assert.equal(got.accept, 'application/json');
    assert.equal(got['content-type'], 'application/json');
  });

  it('keeps them on a redirect within the same origin (the same host and port)', async () => {
    let self = '';
    const same = await redirector(() => self);
    self = same.url;
    const res = await fetch(`${same.url}/start`, { headers: CREDENTIALS });
    assert.equal(res.status, 200);
    assert.equal(seen[0]?.authorization, CREDENTIALS.authorization);
    assert.equal(seen[0]?.['x-api-key'], CREDENTIALS['x-api-key']);
  });

  for (const encoding of ['gzip', 'br'] as BombEncoding[]) {
    for (const contentType of ['application/json', 'text/event-stream']) {
      it(`stops a ${encoding} bomb sent as ${contentType} at SPUR_OUTBOUND_MAX_RESPONSE_BYTES, counted after decompression`, async () => {
        const head = contentType === 'application/json' ? '{"a": "' : 'data: ';
        const bomb = await compressionBomb(encoding, head, 16 * MiB);
        assert.ok(bomb.length < CAP / 8, 'what is sent is far below the cap');
        const server = await listen((_req, res) => {
          res.writeHead(200, { 'content-type': contentType, 'content-encoding': encoding });
          res.write(bomb); // and never ends: only the cap can stop the reader
        });
        listeners.push(server);
        const res = await fetch(server.url);
        const { bytes, error } = await readAll(res);
        assert.ok(error instanceof OutboundLimitError, `stopped by ${String(error)}`);
        assert.match(error.message, CAP_MESSAGE);
        assert.ok(bytes <= CAP, `the reader got ${bytes} bytes, at most the cap`);
        await server.close();
      });
    }
  }

  it('cuts off a server that sends nothing for the idle timeout, before its headers and inside its body', async () => {
    const silent = await listen(() => undefined); // takes the request, never answers
    const stalled = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a": '); // and then nothing
    });
    listeners.push(silent, stalled);
    const idle = new RegExp(`127\\.0\\.0\\.1:\\d+ sent nothing for ${IDLE_MS / 1000} s$`);
    await assert.rejects(impatientFetch(silent.url), idle);
    const res = await impatientFetch(stalled.url);
    assert.equal(res.status, 200);
    const { bytes, error } = await readAll(res);
    assert.equal(bytes, '{"a": '.length);
    assert.match(String((error as Error).message), idle);
  });

  it("stops reading an answer as soon as the caller's signal aborts, even after a garbage collection in between", async () => {
    // A streamed answer that keeps coming (a byte a second), as a model's reply held by its provider.
    const trickling = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => res.write(': held\n\n'), 1000);
      res.on('close', () => clearInterval(timer));
    });
    listeners.push(trickling);
    const caller = new AbortController();
    const res = await fetch(trickling.url, { signal: caller.signal });
    assert.equal(res.status, 200);
    const reading = readAll(res);
    // A run's cancel comes seconds later, after the heap has been collected at least once.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
    gc();
    caller.abort(new Error('the run was cancelled'));
    const outcome = await Promise.race([
      reading,
      new Promise<'still reading'>((resolve) => setTimeout(() => resolve('still reading'), 3000)),
    ]);
    assert.notEqual(outcome, 'still reading', 'the read ended');
    assert.ok(outcome !== 'still reading' && outcome.error, 'with an error');
  });
});
