import assert from 'node:assert/strict';
import http from 'node:http';
import { type CallbackReceiver, startCallbackReceiver } from '../support/callback-receiver';
import { compressionBomb } from '../support/compression-bombs';
import { type Listener, listen } from '../support/counting-listener';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server';
import { type Cfg, l, n } from '../support/graphs';
import { runNode, setEnv } from '../support/integration-runs';

// Server-side requests go where the operator allows, whoever sets the base URL. Every address here
// is on loopback: with SPUR_OUTBOUND_ALLOW_PRIVATE=false (the production default) loopback stands
// for any internal service, and the listeners count connections, so "refused" means nothing arrived.

const LLM = {
  llm_info: { model: 'openai/gpt-4o-mini', max_tokens: 50, temperature: 0.1 },
  user_message: 'hello {{in.x}}',
};
const POLICY =
  /stopped by the outbound policy: 127\.0\.0\.1 is a loopback address; requests to private networks need SPUR_OUTBOUND_ALLOW_PRIVATE=true/;

/** in → out: a run that completes at once, for callbacks. */
const IN_OUT = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } } as Cfg),
    n('out', 'OutputNode', { output_map: { x: 'in.x' } }),
  ],
  links: [l('in', 'out')],
};

/** Starts an in → out run with a callback to `url` (it must be taken) and waits for its end; its id. */
async function completedRunWithCallback(engine: Engine, url: string): Promise<string> {
  const wf = (await engine.http.post('/wf/', { name: `cb-${Math.random()}`, definition: IN_OUT })).body.id as string;
  const started = await engine.http.post(`/wf/${wf}/start_run/`, {
    initial_inputs: { in: { x: 'a' } },
    callback: { url, secret: 'a-callback-secret-of-enough-length' },
  });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  await waitForRun(engine.http, started.body.id);
  return started.body.id as string;
}

/** Sends every request on to `target`, path kept, with the given redirect status. */
const redirectTo =
  (target: () => string, status = 307): http.RequestListener =>
  (req, res) => {
    res.writeHead(status, { location: `${target()}${req.url}` });
    res.end();
  };

describe('security: the outbound policy, production default (no private addresses)', function () {
  this.timeout(120_000);
  let engine: Engine;
  let internal: Listener;
  let redirector: Listener;
  let trustedReceiver: CallbackReceiver;

  before(async () => {
    internal = await listen((_req, res) => res.end('{"secret": "internal answer"}'));
    redirector = await listen(redirectTo(() => internal.url));
    trustedReceiver = await startCallbackReceiver();
    // The redirector and one callback receiver alone are trusted by the operator; where the
    // redirector points is checked again.
    engine = await startEngine({
      SPUR_OUTBOUND_ALLOW_PRIVATE: 'false',
      SPUR_OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${redirector.port},${new URL(trustedReceiver.url).host}`,
    });
  });
  after(async () => {
    await engine?.close();
    await Promise.all([internal?.close(), redirector?.close(), trustedReceiver?.close()]);
  });
  beforeEach(() => {
    internal.connections = 0;
    redirector.connections = 0;
  });

  it('an LLM base URL set through env management cannot reach an internal address: the node fails naming the setting', async () => {
    await setEnv(engine, { OPENAI_API_KEY: 'sk-stored', OPENAI_API_BASE: `${internal.url}/v1` });
    const run = await runNode(engine, 'SingleLLMCallNode', LLM);
    assert.equal(run.task.status, 'FAILED');
    assert.match(run.task.error ?? '', POLICY);
    assert.equal(internal.connections, 0, 'the internal listener received nothing');
  });

  it('nor can one that spells the loopback address in decimal, octal, hexadecimal or as IPv4-compatible IPv6', async () => {
    for (const host of ['2130706433', '0177.0.0.1', '0x7f.0.0.1', '[::127.0.0.1]']) {
      await setEnv(engine, { OPENAI_API_KEY: 'sk-stored', OPENAI_API_BASE: `http://${host}:${internal.port}/v1` });
      const run = await runNode(engine, 'SingleLLMCallNode', LLM);
      assert.equal(run.task.status, 'FAILED', host);
      assert.match(run.task.error ?? '', POLICY, host);
    }
    assert.equal(internal.connections, 0, 'the internal listener received nothing');
  });

  it('an integration base URL cannot either, and its answer never becomes node output', async () => {
    await setEnv(engine, { JINA_API_BASE: internal.url });
    const run = await runNode(engine, 'JinaReaderNode', {
      url_template: 'https://example.com/page',
      use_readerlm_v2: false,
    });
    assert.equal(run.task.status, 'FAILED');
    assert.match(run.task.error ?? '', POLICY);
    assert.doesNotMatch(JSON.stringify(run), /internal answer/);
    assert.equal(internal.connections, 0);
  });

  it("an HTTPRequestNode's url on an internal address, written or from input, fails the node and the address receives nothing", async () => {
    for (const [url, x] of [
      [`${internal.url}/admin`, 'a'],
      ['{{ in.x }}', `${internal.url}/admin`],
      [`http://localhost:${internal.port}/admin`, 'a'],
    ]) {
      const run = await runNode(engine, 'HTTPRequestNode', { url }, { x });
      assert.equal(run.task.status, 'FAILED', url);
      assert.match(
        run.task.error ?? '',
        /stopped by the outbound policy: .*127\.0\.0\.1.* SPUR_OUTBOUND_ALLOW_PRIVATE=true/,
        url,
      );
      assert.doesNotMatch(JSON.stringify(run), /internal answer/);
    }
    assert.equal(internal.connections, 0);
  });

  it('a redirect from an allowed host to an internal address is checked again and refused', async () => {
    await setEnv(engine, { OPENAI_API_BASE: `${redirector.url}/v1`, OPENAI_API_KEY: 'sk-stored' });
    const run = await runNode(engine, 'SingleLLMCallNode', LLM);
    assert.equal(run.task.status, 'FAILED');
    assert.match(run.task.error ?? '', POLICY);
    assert.ok(redirector.connections > 0, 'the allowed host was asked');
    assert.equal(internal.connections, 0, 'the redirect target received nothing');
  });

  it('a callback url on an internal address is refused with 422 before any run exists, and never called', async () => {
    const definition = { nodes: [n('in', 'InputNode', { output_schema: { x: 'string' } } as Cfg)], links: [] };
    const wf = (await engine.http.post('/wf/', { name: 'cb-internal', definition })).body.id as string;
    const res = await engine.http.post(`/wf/${wf}/start_run/`, {
      initial_inputs: { in: { x: 'a' } },
      callback: { url: `${internal.url}/hook`, secret: 'a-callback-secret-of-enough-length' },
    });
    assert.equal(res.status, 422);
    assert.match(
      JSON.stringify(res.body.detail),
      /loopback address; requests to private networks need SPUR_OUTBOUND_ALLOW_PRIVATE=true/,
    );
    assert.deepEqual((await engine.http.get(`/wf/${wf}/runs/`)).body, []);
    assert.equal(internal.connections, 0);
  });

  it('a callback to a loopback receiver listed in SPUR_OUTBOUND_ALLOW_HOSTS is taken and delivered, as other requests to it are', async () => {
    const runId = await completedRunWithCallback(engine, `${trustedReceiver.url}/hook`);
    const [delivered] = await trustedReceiver.waitFor('/hook', 1);
    assert.equal(delivered?.headers['x-spur-event'], 'run.completed');
    assert.equal(delivered?.body.run.id, runId);
  });
});

describe('security: the outbound policy with private addresses allowed (npm run dev)', function () {
  this.timeout(120_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  let redirector: Listener;
  let receiver: Listener;
  const received: string[] = [];

  before(async () => {
    fake = await startFakeLlmServer();
    redirector = await listen(redirectTo(() => fake.url));
    receiver = await listen((req, res) => {
      received.push(String(req.headers['x-spur-event']));
      res.end();
    });
    engine = await startEngine({ SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' });
  });
  after(async () => {
    await engine?.close();
    await Promise.all([fake?.close(), redirector?.close(), receiver?.close()]);
  });

  it('the same base URL, redirect and callback work', async () => {
    await setEnv(engine, { OPENAI_API_KEY: 'sk-stored', OPENAI_API_BASE: `${fake.url}/v1` });
    const direct = await runNode(engine, 'SingleLLMCallNode', LLM);
    assert.equal(direct.task.status, 'COMPLETED', direct.task.error ?? '');

    await setEnv(engine, { OPENAI_API_BASE: `${redirector.url}/v1`, OPENAI_API_KEY: 'sk-stored' });
    const redirected = await runNode(engine, 'SingleLLMCallNode', LLM);
    assert.equal(redirected.task.status, 'COMPLETED', redirected.task.error ?? '');
    assert.equal(fake.requests.length, 2, 'the redirected call reached the provider');

    await completedRunWithCallback(engine, `${receiver.url}/hook`);
    for (let i = 0; i < 100 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(received, ['run.completed']);
  });

  it('a provider streaming a gzip bomb (one endless event) fails the node at SPUR_OUTBOUND_MAX_RESPONSE_BYTES, asked once, and the run fails', async () => {
    // 65 MiB decoded, 64 KiB sent: past the default cap of 64 MiB, and the answer never ends.
    const bomb = await compressionBomb('gzip', 'data: ', 65 * 1024 * 1024);
    const streamed: unknown[] = [];
    const provider = await listen((req, res) => {
      const body: Buffer[] = [];
      req.on('data', (chunk: Buffer) => body.push(chunk));
      req.on('end', () => {
        streamed.push((JSON.parse(Buffer.concat(body).toString('utf8')) as { stream?: unknown }).stream);
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
        res.write(bomb);
      });
    });
    try {
      await setEnv(engine, { OPENAI_API_BASE: `${provider.url}/v1`, OPENAI_API_KEY: 'sk-stored' });
      const run = await runNode(engine, 'SingleLLMCallNode', LLM);
      assert.deepEqual(streamed, [true], 'one streamed request, not retried');
      assert.equal(run.status, 'FAILED');
      assert.equal(run.task.status, 'FAILED');
      assert.match(
        run.task.error ?? '',
        /OpenAI request stopped by the outbound policy: the answer exceeded 67108864 bytes \(SPUR_OUTBOUND_MAX_RESPONSE_BYTES\)/,
      );
    } finally {
      await provider.close();
    }
  });
});
