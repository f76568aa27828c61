import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Engine } from '../support/engine';
import { waitForRun } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { input, l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver';
import { costAtPublishedPrice } from '../support/prices';

const MODEL = 'openai/gpt-4o-mini';

/** in → ask (one model call) → out. */
const askOnce = {
  nodes: [
    input(),
    n('ask', 'SingleLLMCallNode', {
      llm_info: { model: MODEL, max_tokens: 100, temperature: 0 },
      user_message: 'say {{in.x}}',
    }),
    n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
  ],
  links: [l('in', 'ask'), l('ask', 'out')],
};

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Modules that only a process with tracing on may load. */
const sdkModulesLoaded = () =>
  Object.keys(require.cache).filter((path) =>
    /[\\/]@opentelemetry[\\/](sdk-trace|exporter-trace-otlp-proto|otlp-exporter-base)[\\/]/.test(path),
  );

async function createWorkflow(engine: Engine): Promise<string> {
  const res = await engine.http.post('/wf/', { name: `traced-${hex(4)}`, definition: askOnce });
  assert.equal(res.status, 200, res.text);
  return res.body.id as string;
}

function startRun(engine: Engine, wfId: string, traceparent?: string) {
  return engine.http.request(
    'POST',
    `/wf/${wfId}/start_run/`,
    { initial_inputs: { in: { x: 'hi' } } },
    traceparent === undefined ? {} : { traceparent },
  );
}

const ofRun = (spans: ReceivedSpan[], runId: string) => spans.filter((s) => s.attributes['spur.run.id'] === runId);
const runSpanOf = (spans: ReceivedSpan[], runId: string) =>
  ofRun(spans, runId).find((s) => s.attributes['spur.workflow.id'] !== undefined);

/** An engine with a fake provider for the enclosing suite, started with `env()` (read when it starts). */
function llmEngine(env: () => Record<string, string>): { engine: Engine; fake: FakeLlmServer } {
  const running = {} as { engine: Engine; fake: FakeLlmServer };
  before(async () => {
    Object.assign(running, await startLlmEngine(env()));
  });
  after(async () => {
    await running.engine?.close();
    await running.fake?.close();
  });
  return running;
}

describe('e2e: run traces exported over OTLP', function () {
  this.timeout(180_000);
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(async () => {
    await receiver?.close();
  });

  // First in this file: nothing before it may have loaded the SDK in this process.
  describe('with no OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    const running = llmEngine(() => ({}));

    it('runs a model-calling run without loading the OpenTelemetry SDK or sending anything', async () => {
      running.fake.enqueue({ content: JSON.stringify({ output: 'a' }), usage: { input: 3, output: 2 } });
      const started = await startRun(
        running.engine,
        await createWorkflow(running.engine),
        `00-${hex(16)}-${hex(8)}-01`,
      );
      assert.equal(started.status, 200, started.text);
      assert.equal((await waitForRun(running.engine.http, started.body.id)).status, 'COMPLETED');
      // Longer than a traced worker waits before exporting.
      await new Promise((r) => setTimeout(r, 1500));
      assert.deepEqual(sdkModulesLoaded(), []);
      assert.deepEqual(receiver.requests, []);
    });
  });

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
    // The endpoint reaches the api and its worker as `npm run dev` would pass it: in their environment.
    const running = llmEngine(() => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'spur-trace-test',
    }));
    let wfId: string;
    before(async () => {
      wfId = await createWorkflow(running.engine);
    });

    it('exports the span tree of a run whose model-calling node failed once and was retried, under the caller’s traceparent', async () => {
      const callerTrace = hex(16);
      const callerSpan = hex(8);
      // The provider fails the first attempt (500: retried by Temporal), then answers.
      running.fake.enqueue(
        { status: 500 },
        { content: JSON.stringify({ output: 'hello' }), usage: { input: 1200, output: 345 } },
      );
      const started = await startRun(running.engine, wfId, `00-${callerTrace}-${callerSpan}-01`);
      assert.equal(started.status, 200, started.text);
      const runId = started.body.id as string;
      assert.equal((await waitForRun(running.engine.http, runId)).status, 'COMPLETED');

      const spans = await receiver.waitFor((all) => {
        const mine = ofRun(all, runId);
        return (
          runSpanOf(all, runId) !== undefined && mine.filter((s) => s.attributes['spur.node.id'] === 'ask').length >= 2
        );
      });
      // The probe of the first test sees the SDK once tracing is on (so its empty answer meant something).
      assert.notDeepEqual(sdkModulesLoaded(), []);
      const trace = spans.filter((s) => s.traceId === callerTrace);
      const run = runSpanOf(spans, runId) as ReceivedSpan;

      // The run: the caller's trace and span are its trace and parent; it spans the run, ended OK.
      assert.equal(run.traceId, callerTrace);
      assert.equal(run.parentSpanId, callerSpan);
      assert.equal(run.name, `run ${wfId}`);
      assert.equal(run.attributes['spur.run.status'], 'COMPLETED');
      assert.equal(run.statusCode, 1);
      assert.equal(run.resource['service.name'], 'spur-trace-test');

      // Every node execution is a child of the run span (the InputNode is not executed: its output is
      // the run's input; the OutputNode is, as a local activity); the model node has one span per attempt.
      const nodeSpans = trace.filter((s) => s.attributes['spur.node.id'] !== undefined);
      for (const s of nodeSpans) assert.equal(s.parentSpanId, run.spanId, `${s.name} is a child of the run span`);
      assert.deepEqual([...new Set(nodeSpans.map((s) => s.attributes['spur.node.id']))].sort(), ['ask', 'out']);
      const attempts = nodeSpans
        .filter((s) => s.attributes['spur.node.id'] === 'ask')
        .sort((a, b) => Number(a.attributes['spur.attempt']) - Number(b.attributes['spur.attempt']));
      assert.deepEqual(
        attempts.map((s) => [s.name, s.attributes['spur.attempt'], s.attributes['spur.node.status'], s.statusCode]),
        [
          ['execute SingleLLMCallNode', 1, 'FAILED', 2],
          ['execute SingleLLMCallNode', 2, 'COMPLETED', 1],
        ],
      );
      const [failed, retried] = attempts as [ReceivedSpan, ReceivedSpan];
      assert.match(failed.statusMessage, /500/);
      assert.equal(retried.attributes['spur.node.type'], 'SingleLLMCallNode');
      assert.equal(retried.attributes['spur.node.title'], 'ask');

      // The model calls: a child of their attempt's span each, the answered one with GenAI usage and cost.
      const calls = trace.filter((s) => s.attributes['gen_ai.system'] !== undefined);
      assert.equal(calls.length, 2);
      const failedCall = calls.find((s) => s.parentSpanId === failed.spanId) as ReceivedSpan;
      const answered = calls.find((s) => s.parentSpanId === retried.spanId) as ReceivedSpan;
      assert.equal(failedCall.statusCode, 2);
      assert.equal(answered.name, 'chat gpt-4o-mini');
      assert.deepEqual(
        [
          answered.attributes['gen_ai.system'],
          answered.attributes['gen_ai.request.model'],
          answered.attributes['gen_ai.usage.input_tokens'],
          answered.attributes['gen_ai.usage.output_tokens'],
        ],
        ['openai', 'gpt-4o-mini', 1200, 345],
      );
      const cost = costAtPublishedPrice(MODEL, [{ input: 1200, output: 345 }]);
      assert.ok(Math.abs(Number(answered.attributes['spur.cost_usd']) - cost) < 1e-9, `cost ${cost}`);

      // Nothing the provider key could be read from.
      const everything = JSON.stringify(trace.map((s) => [s.attributes, s.statusMessage, s.resource]));
      assert.ok(!everything.includes('sk-test'), 'no provider key in any span');
    });

    it('exports no prompt and no reply: no span name, attribute, event or status holds their text, nor any byte of the export', async () => {
      const prompt = `prompt-${hex(8)}`;
      const reply = `reply-${hex(8)}`;
      // `first` is answered; `second` gets a reply that is not the JSON object its schema asks for, and fails.
      const wf = await running.engine.http.post('/wf/', {
        name: `traced-content-${hex(4)}`,
        definition: {
          nodes: [
            input(),
            n('first', 'SingleLLMCallNode', {
              llm_info: { model: MODEL, max_tokens: 100, temperature: 0 },
              user_message: 'say {{in.x}}',
            }),
            n('second', 'SingleLLMCallNode', {
              llm_info: { model: MODEL, max_tokens: 100, temperature: 0 },
              user_message: 'again {{first.output}}',
              output_json_schema: JSON.stringify({
                type: 'object',
                properties: { answer: { type: 'string' } },
                required: ['answer'],
              }),
            }),
            n('out', 'OutputNode', { output_map: { answer: 'second.answer' } }),
          ],
          links: [l('in', 'first'), l('first', 'second'), l('second', 'out')],
        },
      });
      assert.equal(wf.status, 200, wf.text);
      running.fake.enqueue(
        { content: JSON.stringify({ output: reply }), usage: { input: 7, output: 7 } },
        { content: `${reply} is not JSON`, usage: { input: 7, output: 7 } },
      );
      const started = await running.engine.http.post(`/wf/${wf.body.id}/start_run/`, {
        initial_inputs: { in: { x: prompt } },
      });
      assert.equal(started.status, 200, started.text);
      const runId = started.body.id as string;
      const ended = await waitForRun(running.engine.http, runId);
      assert.equal(ended.status, 'FAILED');
      assert.match(String(ended.message), /Node 'second' .*not a JSON object/);
      const asked = running.fake.requests.slice(-2).map((r) => JSON.stringify(r.body));
      assert.ok(
        asked[0]?.includes(prompt) && asked[1]?.includes(reply),
        `the prompts, and the first reply, reached the provider: ${asked.join(' | ')}`,
      );

      const spans = await receiver.waitFor(
        (all) =>
          runSpanOf(all, runId) !== undefined &&
          ofRun(all, runId).filter((s) => s.attributes['gen_ai.system'] === undefined).length >= 2,
      );
      const trace = spans.filter((s) => s.traceId === (runSpanOf(spans, runId) as ReceivedSpan).traceId);
      const second = trace.find((s) => s.attributes['spur.node.id'] === 'second');
      assert.equal(second?.statusCode, 2, 'the failed attempt was exported');
      assert.equal(second?.attributes['error.type'], 'NodeExecutionError');
      const texts = trace.flatMap((s) => [
        s.name,
        s.statusMessage,
        ...Object.values(s.attributes).map(String),
        ...s.events.flatMap((e) => [e.name, ...Object.values(e.attributes).map(String)]),
      ]);
      for (const secret of [prompt, reply]) {
        const what = secret.split('-')[0];
        assert.deepEqual(
          texts.filter((t) => t.includes(secret)),
          [],
          `${what} text in the exported spans`,
        );
        assert.ok(!receiver.bodies.some((b) => b.includes(secret)), `${what} text in an export request`);
      }
    });

    it('parents a blocking run’s trace on its traceparent', async () => {
      const callerTrace = hex(16);
      const callerSpan = hex(8);
      running.fake.enqueue({ content: JSON.stringify({ output: 'b' }), usage: { input: 5, output: 5 } });
      const res = await running.engine.http.request(
        'POST',
        `/wf/${wfId}/run/`,
        { initial_inputs: { in: { x: 'hi' } } },
        { traceparent: `00-${callerTrace}-${callerSpan}-00` },
      );
      assert.equal(res.status, 200, res.text);
      const [listed] = (await running.engine.http.get(`/wf/${wfId}/runs/`)).body as { id: string }[];
      const runId = (listed as { id: string }).id;
      const spans = await receiver.waitFor((all) => runSpanOf(all, runId) !== undefined);
      const run = runSpanOf(spans, runId) as ReceivedSpan;
      assert.deepEqual([run.traceId, run.parentSpanId], [callerTrace, callerSpan]);
    });

    it('ignores a malformed traceparent: the run starts (200) and its trace is its own', async () => {
      const malformed = [
        `00-${'0'.repeat(32)}-${hex(8)}-01`, // all-zero trace id
        `00-${hex(16)}-${'0'.repeat(16)}-01`, // all-zero span id
        `01-${hex(16)}-${hex(8)}-01`, // unknown version
        `00-${hex(16).toUpperCase()}-${hex(8)}-01`, // not lowercase
        `00-${hex(16)}-${hex(8)}-01-extra`,
        'garbage',
      ];
      for (const header of malformed) {
        running.fake.enqueue({ content: JSON.stringify({ output: 'c' }), usage: { input: 1, output: 1 } });
        const started = await startRun(running.engine, wfId, header);
        assert.equal(started.status, 200, `${header}: ${started.text}`);
        const runId = started.body.id as string;
        assert.equal((await waitForRun(running.engine.http, runId)).status, 'COMPLETED');
        const spans = await receiver.waitFor((all) => runSpanOf(all, runId) !== undefined);
        const run = runSpanOf(spans, runId) as ReceivedSpan;
        assert.equal(run.parentSpanId, '', `${header}: the run span is a root`);
        assert.ok(!header.includes(run.traceId.toLowerCase()) && !/^0+$/.test(run.traceId), header);
      }
    });
  });
});
