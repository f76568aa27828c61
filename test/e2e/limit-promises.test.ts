// What fleet-wide limits promise (docs/llm-and-agents.md, Provider limits across the fleet), read
// from the fake provider's side: slots go round-robin across runs, tokens_per_minute holds calls
// back, and a run that vanished while holding a slot does not keep it.
import assert from 'node:assert/strict';
import { type Engine, waitForRun } from '../support/engine';
import type { FakeLlmServer, RecordedRequest } from '../support/fake-llm-server';
import { input, l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';
import { until } from '../support/exec-log';
import { settingsReachWorkers } from '../support/settings';
import { runWorkflowId } from '../../src/contracts/workflow-names';

const MODEL = 'openai/gpt-4o-mini';
const ASKS = ['a1', 'a2', 'a3'];

/** Three calls side by side, each saying which run made it (`in.x`). */
const threeCalls = {
  nodes: [
    input(),
    ...ASKS.map((id) =>
      n(id, 'SingleLLMCallNode', { llm_info: { model: MODEL, max_tokens: 50 }, user_message: 'run {{in.x}}' }),
    ),
    n('out', 'OutputNode', { output_map: Object.fromEntries(ASKS.map((id) => [id, `${id}.output`])) }),
  ],
  links: [...ASKS.map((id) => l('in', id)), ...ASKS.map((id) => l(id, 'out'))],
};

/** One call that may answer 1000 tokens. */
const oneCall = {
  nodes: [
    input(),
    n('ask', 'SingleLLMCallNode', { llm_info: { model: MODEL, max_tokens: 1000 }, user_message: 'run {{in.x}}' }),
    n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
  ],
  links: [l('in', 'ask'), l('ask', 'out')],
};

type Task = { node_id: string; waiting_for: string | null };

/** The run a request was made for: the last user message is `run <x>`. */
function runOf(request: RecordedRequest): string {
  const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
  const text = JSON.stringify(messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
  return /run (\w+)/.exec(text)?.[1] ?? '?';
}

describe('e2e: fleet-wide limits keep their promises', function () {
  this.timeout(180_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  before(async () => {
    ({ engine, fake } = await startLlmEngine());
  });
  afterEach(async () => {
    assert.equal((await engine.http.put('/limits/', [])).status, 200);
    await settingsReachWorkers();
    fake.respondWith(undefined);
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  const workflow = async (definition: unknown) =>
    (await engine.http.post('/wf/', { name: `limits-${Math.random()}`, definition })).body.id as string;
  const start = async (workflowId: string, x: string) => {
    const res = await engine.http.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x } } });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  const waiting = async (runId: string, key: string) =>
    ((await engine.http.get(`/run/${runId}/`)).body.tasks as Task[] | undefined)?.filter((t) => t.waiting_for === key)
      .length ?? 0;
  const sent = () => fake.requests.filter((r) => r.protocol !== null);
  /** From now, the first call made is held at the provider (its reply unsent) until `open`; the others are answered. */
  const holdFirstCall = () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const before = sent().length;
    fake.respondWith(() =>
      sent().length - before === 1
        ? { content: JSON.stringify({ output: 'held' }), gates: [{ afterChunks: 0, open: gate }] }
        : { content: JSON.stringify({ output: 'ok' }) },
    );
    return { before, open };
  };

  it('max_concurrent 1, two runs of three calls each: once both wait, grants alternate between the runs (A B A B), not one run’s calls first', async () => {
    assert.equal((await engine.http.put('/limits/', [{ key: 'openai', max_concurrent: 1 }])).status, 200);
    await settingsReachWorkers();
    const id = await workflow(threeCalls);
    // The first call is held at the provider until both runs have their other calls waiting.
    const { before, open } = holdFirstCall();
    const a = await start(id, 'A');
    await until('run A’s first call at the provider and its two others waiting', async () => {
      return sent().length - before === 1 && (await waiting(a, 'openai')) === 2;
    });
    const b = await start(id, 'B');
    await until('run B’s three calls waiting', async () => (await waiting(b, 'openai')) === 3);
    open();
    for (const runId of [a, b])
      assert.equal((await waitForRun(engine.http, runId, undefined, 120_000)).status, 'COMPLETED');
    const order = sent().slice(before).map(runOf);
    // After A's held call, the runs take turns until B alone has calls left.
    assert.deepEqual(order, ['A', 'A', 'B', 'A', 'B', 'B'], `arrival order at the provider: ${order.join(' ')}`);
  });

  it('tokens_per_minute 1500: a call that may use 1000 tokens waits while the minute holds a call that used 1200, and goes when the limit is lifted', async () => {
    assert.equal((await engine.http.put('/limits/', [{ key: MODEL, tokens_per_minute: 1500 }])).status, 200);
    await settingsReachWorkers();
    const id = await workflow(oneCall);
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), usage: { input: 600, output: 600 } }));
    const before = sent().length;
    const first = await start(id, 'first');
    assert.equal((await waitForRun(engine.http, first)).status, 'COMPLETED');
    const second = await start(id, 'second');
    await until('the second run waiting for the limit', async () => (await waiting(second, MODEL)) === 1);
    assert.deepEqual(sent().slice(before).map(runOf), ['first'], 'the second call was not sent');
    assert.equal((await engine.http.put('/limits/', [])).status, 200);
    await settingsReachWorkers();
    assert.equal((await waitForRun(engine.http, second)).status, 'COMPLETED');
    assert.deepEqual(sent().slice(before).map(runOf), ['first', 'second']);
  });

  it('a run terminated in Temporal while its call holds the only slot does not keep it: the waiting run’s call reaches the provider while the held reply is still unanswered', async () => {
    assert.equal((await engine.http.put('/limits/', [{ key: 'openai', max_concurrent: 1 }])).status, 200);
    await settingsReachWorkers();
    const id = await workflow(oneCall);
    // The holder's reply is never sent while the test runs.
    const { before, open } = holdFirstCall();
    try {
      const holder = await start(id, 'holder');
      await until('the holder’s call at the provider', async () => sent().length - before === 1);
      const waiter = await start(id, 'waiter');
      await until('the waiter waiting for the slot', async () => (await waiting(waiter, 'openai')) === 1);
      const prefix = engine.api.env.SPUR_WORKFLOW_ID_PREFIX;
      await engine.api.temporal.workflow.getHandle(runWorkflowId(holder, prefix)).terminate('the run vanished');
      assert.equal((await waitForRun(engine.http, waiter, undefined, 60_000)).status, 'COMPLETED');
      const [held, next] = sent().slice(before);
      assert.deepEqual(
        [held, next].map((r) => r && runOf(r)),
        ['holder', 'waiter'],
      );
      assert.equal(held?.answered, undefined, 'the holder’s reply was never sent: its slot came back without it');
    } finally {
      open();
    }
  });
});
