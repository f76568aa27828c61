import assert from 'node:assert/strict';
import type { Engine } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';
import { TaskDeltaData } from '../../src/modules/runs/run-events.schemas';
import { assertWholeStream, openSse, type SseEvent } from '../support/sse';

const ANSWER_SCHEMA = JSON.stringify({
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
});

/** src → llm (JSON mode) → out. */
const definitionFor = (model: string) => ({
  nodes: [
    n('src', 'InputNode', { output_schema: { question: 'string' } }),
    n('llm', 'SingleLLMCallNode', {
      llm_info: { model, max_tokens: 200, temperature: 0.1 },
      user_message: 'Q: {{src.question}}',
      output_json_schema: ANSWER_SCHEMA,
      output_schema: { answer: 'string' },
    }),
    n('out', 'OutputNode', { output_map: { answer: 'llm.answer' } }),
  ],
  links: [l('src', 'llm'), l('llm', 'out')],
});

/** The reply in pieces: the JSON text the model writes, token by token. */
const PIECES = ['{"ans', 'wer": "', 'streamed ', 'word ', 'by ', 'word', '"}'];

const isDelta = (e: SseEvent) => e.event === 'task.delta';

/** A promise the test resolves when it is ready for the fake to go on. */
function opening(): { promise: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('e2e: task.delta (LLM text as it streams) on GET /run/{id}/events/', function () {
  this.timeout(120_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  before(async () => {
    ({ engine, fake } = await startLlmEngine({ SPUR_EVENT_STREAM_POLL_MS: '50' }));
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  async function startRun(model = 'openai/gpt-4o'): Promise<{ runId: string; workflowId: string }> {
    const wf = (await engine.http.post('/wf/', { name: `delta-${Math.random()}`, definition: definitionFor(model) }))
      .body;
    const res = await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { question: 'why?' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return { runId: res.body.id as string, workflowId: wf.id as string };
  }

  it('streams the reply as task.delta events (no id) before the task completes; the output is that of an unstreamed call', async () => {
    fake.requests.length = 0;
    // The reply waits until the stream is watching the running node, sends two pieces, then waits
    // until the stream has shown them: the rest can only come as later deltas.
    const watching = opening();
    const shown = opening();
    fake.enqueue({
      chunks: PIECES,
      gates: [
        { afterChunks: 0, open: watching.promise },
        { afterChunks: 2, open: shown.promise },
      ],
    });
    const { runId } = await startRun();
    const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
    assert.equal(stream.status, 200);
    await stream.waitFor((es) => es.some((e) => e.event === 'task.started' && e.data.node_id === 'llm'), 60_000);
    watching.open();
    await stream.waitFor((es) => es.some(isDelta), 60_000);
    shown.open();
    assert.equal(await stream.ended, true);

    const deltas = stream.events.filter(isDelta);
    assert.ok(deltas.length >= 2, `several deltas, got ${deltas.length}`);
    for (const d of deltas) {
      assert.ok(Number.isNaN(d.id), 'a delta has no id: line');
      assert.deepEqual(Object.keys(d.data).sort(), ['node_id', 'text']);
      assert.ok(TaskDeltaData.safeParse(d.data).success);
      assert.equal(d.data.node_id, 'llm');
    }
    assert.equal(deltas.map((d) => d.data.text).join(''), PIECES.join(''), 'the pieces add up to the reply');
    const completed = stream.events.findIndex((e) => e.event === 'task.completed' && e.data.node_id === 'llm');
    assert.ok(
      completed > stream.events.lastIndexOf(deltas.at(-1) as SseEvent),
      'every delta comes before the task completes',
    );
    assert.ok(
      stream.events.findIndex((e) => e.event === 'task.started' && e.data.node_id === 'llm') <
        stream.events.indexOf(deltas[0] as SseEvent),
      'after it started',
    );
    // The durable events are whole and numbered as ever: deltas take no sequence number.
    assertWholeStream(stream.events.filter((e) => !isDelta(e)));
    assert.deepEqual(stream.events[completed]?.data.outputs, { answer: 'streamed word by word' });

    const sent = fake.requests.at(-1)?.body;
    assert.equal(sent.stream, true);
    assert.deepEqual(sent.stream_options, { include_usage: true });
    assert.equal(sent.response_format?.type, 'json_schema', 'JSON mode as unstreamed');

    const run = (await engine.http.get(`/run/${runId}/`)).body;
    assert.equal(run.status, 'COMPLETED');
    assert.deepEqual(run.outputs.out, { answer: 'streamed word by word' });
    const task = run.tasks.find((t: { node_id: string }) => t.node_id === 'llm');
    assert.deepEqual(task.outputs, { answer: 'streamed word by word' });
    assert.deepEqual(
      { prompt_tokens: task.usage.prompt_tokens, completion_tokens: task.usage.completion_tokens },
      { prompt_tokens: 10, completion_tokens: 10 },
      'usage from the last chunk',
    );

    // A client that comes back later replays the durable events only: the output, no deltas.
    const replay = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
    assert.equal(await replay.ended, true);
    assert.deepEqual(replay.events.filter(isDelta), []);
    assert.deepEqual(
      replay.events.map((e) => e.id),
      stream.events.filter((e) => !isDelta(e)).map((e) => e.id),
    );
  });

  it('a client reconnecting mid-node with Last-Event-ID gets no old deltas, only new ones, and the whole output on completion', async () => {
    // Three pieces reach the first client; the rest is sent only after it has gone and come back.
    const watching = opening();
    const reconnected = opening();
    fake.enqueue({
      chunks: PIECES,
      chunkDelayMs: 100,
      gates: [
        { afterChunks: 0, open: watching.promise },
        { afterChunks: 3, open: reconnected.promise },
      ],
    });
    const early = PIECES.slice(0, 3).join('');
    const { runId } = await startRun();
    const first = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
    await first.waitFor((es) => es.some((e) => e.event === 'task.started' && e.data.node_id === 'llm'), 60_000);
    watching.open();
    await first.waitFor(
      (es) =>
        es
          .filter(isDelta)
          .map((d) => d.data.text)
          .join('') === early,
      60_000,
    );
    first.close();
    const lastId = first.events.filter((e) => !isDelta(e)).at(-1)?.id;
    const second = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`, { 'Last-Event-ID': String(lastId) });
    reconnected.open();
    assert.equal(await second.ended, true);
    const durable = [...first.events, ...second.events].filter((e) => !isDelta(e));
    assertWholeStream(durable);
    const seenSecond = second.events
      .filter(isDelta)
      .map((d) => d.data.text)
      .join('');
    assert.ok(
      PIECES.slice(3).join('').endsWith(seenSecond),
      `the second stream has no piece the first one had: ${JSON.stringify(seenSecond)}`,
    );
    const completed = durable.find((e) => e.event === 'task.completed' && e.data.node_id === 'llm');
    assert.deepEqual(completed?.data.outputs, { answer: 'streamed word by word' });
  });

  it('an Anthropic model streams its text the same way', async () => {
    fake.enqueue({ chunks: PIECES, chunkDelayMs: 300 });
    const { runId } = await startRun('anthropic/claude-3-5-haiku-latest');
    const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
    assert.equal(await stream.ended, true);
    assert.equal(fake.requests.at(-1)?.path, '/v1/messages');
    const deltas = stream.events.filter(isDelta);
    assert.equal(deltas.map((d) => d.data.text).join(''), PIECES.join(''));
    const completed = stream.events.find((e) => e.event === 'task.completed' && e.data.node_id === 'llm') as SseEvent;
    assert.ok(stream.events.indexOf(completed) > stream.events.indexOf(deltas.at(-1) as SseEvent));
    assert.deepEqual(completed.data.outputs, { answer: 'streamed word by word' });
  });

  it('a reply that comes whole within one batch (150 ms) is no task.delta and no stored piece: its task.completed carries it', async () => {
    // In one write: sent piece by piece, a busy test process (the fake is in it) can send them more
    // than a batch apart, as a full suite's load once did.
    fake.enqueue({ chunks: PIECES, oneWrite: true });
    const { runId } = await startRun();
    const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
    assert.equal(await stream.ended, true);
    assert.equal(fake.requests.at(-1)?.body.stream, true, 'the call was streamed');
    assert.deepEqual(stream.events.filter(isDelta), []);
    assert.equal(await engine.api.models.TaskDelta.countDocuments({ run_id: runId }), 0);
    const completed = stream.events.find((e) => e.event === 'task.completed' && e.data.node_id === 'llm');
    assert.deepEqual(completed?.data.outputs, { answer: 'streamed word by word' });
  });

  it('deleting the workflow deletes what its runs streamed', async () => {
    // Pieces a batch apart: a reply that came whole within one batch would store none.
    fake.enqueue({ chunks: PIECES, chunkDelayMs: 200 });
    const { runId, workflowId } = await startRun();
    const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
    assert.equal(await stream.ended, true);
    assert.ok((await engine.api.models.TaskDelta.countDocuments({ run_id: runId })) > 0, 'kept a while after the task');
    assert.equal((await engine.http.delete(`/wf/${workflowId}/`)).status, 204);
    assert.equal(await engine.api.models.TaskDelta.countDocuments({ run_id: runId }), 0);
  });
});
