import assert from 'node:assert/strict';
import { type Engine, waitForRun } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { input, l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';
import { settingsReachWorkers } from '../support/settings';
import { costAtPublishedPrice } from '../support/prices';
import { freePort } from '../../scripts/lib/ports';

const PRIMARY = 'openai/gpt-4o-mini';
const FALLBACK = 'anthropic/claude-3-5-haiku-latest';
const LAST = 'anthropic/claude-3-5-sonnet-latest';

/** One model call with fallbacks; one retry per model, so each model is asked twice before it is given up. */
const withFallbacks = (fallback_models: unknown) => ({
  nodes: [
    input(),
    n('ask', 'SingleLLMCallNode', {
      llm_info: { model: PRIMARY, max_tokens: 50, temperature: 0, fallback_models },
      user_message: 'say {{in.x}}',
      max_retries: 1,
    }),
    n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
  ],
  links: [l('in', 'ask'), l('ask', 'out')],
});

interface Task {
  node_id: string;
  status: string;
  error: string | null;
  model: string | null;
  model_failures: { model: string; error: string }[];
  usage: { cost_usd: number | null; by_model: { model: string; calls: number; cost_usd: number | null }[] } | null;
}

describe('e2e: model fallbacks (llm_info.fallback_models)', function () {
  this.timeout(120_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  before(async () => {
    ({ engine, fake } = await startLlmEngine());
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  /** Runs the graph to its end; the fake answers by model (the provider's own name, in the body). */
  async function runWith(fallbacks: unknown, answer: (model: string) => { status: number; text?: string }) {
    const asked: string[] = [];
    fake.respondWith((req) => {
      const model = String(req.body?.model);
      asked.push(model);
      const { status, text } = answer(model);
      return status === 200
        ? { content: JSON.stringify({ output: text }), usage: { input: 1000, output: 200 } }
        : { status };
    });
    const wf = await engine.http.post('/wf/', {
      name: `fallback-${Math.random()}`,
      definition: withFallbacks(fallbacks),
    });
    assert.equal(wf.status, 200, wf.text);
    const started = await engine.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'hi' } } });
    assert.equal(started.status, 200, started.text);
    const run = await waitForRun(engine.http, started.body.id);
    const task = (run.tasks as Task[]).find((t) => t.node_id === 'ask') as Task;
    return { run, task, asked };
  }
  const providerName = (id: string) => id.split('/')[1] as string;

  it('asks the next model with the same messages once the first fails with 503 on every try, and records which answered and what each cost', async () => {
    const { run, task, asked } = await runWith([FALLBACK], (m) =>
      m === providerName(PRIMARY) ? { status: 503 } : { status: 200, text: `from ${m}` },
    );
    assert.equal(run.status, 'COMPLETED', run.error ?? '');
    assert.deepEqual(asked, [providerName(PRIMARY), providerName(PRIMARY), providerName(FALLBACK)]);
    const bodies = fake.requests.slice(-3).map((r) => r.body);
    const userText = (body: { messages: { role: string; content: unknown }[] }) =>
      JSON.stringify(body.messages.filter((m) => m.role === 'user').map((m) => m.content));
    assert.match(userText(bodies[0]), /say hi/);
    assert.equal(userText(bodies[2]), userText(bodies[0]), 'the fallback gets the same user message');
    assert.equal(run.outputs.out.answer, `from ${providerName(FALLBACK)}`);
    assert.equal(task.model, FALLBACK);
    assert.deepEqual(
      task.model_failures.map((f) => f.model),
      [PRIMARY],
    );
    assert.match(task.model_failures[0]?.error ?? '', /503/);
    const cost = costAtPublishedPrice(FALLBACK, [{ input: 1000, output: 200 }]);
    assert.deepEqual(
      task.usage?.by_model.map((m) => [m.model, m.calls, m.cost_usd]),
      [[FALLBACK, 1, cost]],
    );
    assert.equal(task.usage?.cost_usd, cost);
  });

  it('falls back the same way under a provider limit, whose retries the run makes itself', async () => {
    assert.equal((await engine.http.put('/limits/', [{ key: 'openai', max_concurrent: 1 }])).status, 200);
    await settingsReachWorkers();
    try {
      const { run, task, asked } = await runWith([FALLBACK], (m) =>
        m === providerName(PRIMARY) ? { status: 503 } : { status: 200, text: 'limited' },
      );
      assert.equal(run.status, 'COMPLETED', run.error ?? '');
      assert.deepEqual(asked, [providerName(PRIMARY), providerName(PRIMARY), providerName(FALLBACK)]);
      assert.equal(task.model, FALLBACK);
    } finally {
      assert.equal((await engine.http.put('/limits/', [])).status, 200);
      await settingsReachWorkers();
    }
  });

  it('an AgentNode falls back per model call: its answer comes from the fallback, paid for as that model', async () => {
    const asked: string[] = [];
    fake.respondWith((req) => {
      asked.push(String(req.body?.model));
      return req.protocol === 'openai'
        ? { status: 503 }
        : { content: JSON.stringify({ output: 'agent via fallback' }), usage: { input: 100, output: 20 } };
    });
    const definition = {
      nodes: [
        input(),
        n('agent', 'AgentNode', {
          llm_info: { model: PRIMARY, max_tokens: 50, temperature: 0, fallback_models: [FALLBACK] },
          system_message: 'Answer.',
          user_message: '{{in.x}}',
          max_iterations: 2,
          max_retries: 0,
        }),
        n('out', 'OutputNode', { output_map: { answer: 'agent.output' } }),
      ],
      links: [l('in', 'agent'), l('agent', 'out')],
    };
    const wf = await engine.http.post('/wf/', { name: `agent-fallback-${Math.random()}`, definition });
    const res = await engine.http.post(`/wf/${wf.body.id}/run/`, { initial_inputs: { in: { x: 'go' } } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.out.answer, 'agent via fallback');
    assert.deepEqual(asked, [providerName(PRIMARY), providerName(FALLBACK)]);
    const [run] = (await engine.http.get(`/wf/${wf.body.id}/runs/`)).body;
    const task = (run.tasks as Task[]).find((t) => t.node_id === 'agent') as Task;
    assert.deepEqual(
      task.usage?.by_model.map((m) => [m.model, m.calls, m.cost_usd]),
      [[FALLBACK, 1, costAtPublishedPrice(FALLBACK, [{ input: 100, output: 20 }])]],
    );
  });

  it('a BestOfNNode falls back for its sample and its rating alike', async () => {
    const asked: string[] = [];
    fake.respondWith((req) => {
      asked.push(String(req.body?.model));
      if (req.protocol === 'openai') return { status: 503 };
      return { content: JSON.stringify({ response: 'sampled by the fallback', rating: 9 }) };
    });
    const definition = {
      nodes: [
        input(),
        n('best', 'BestOfNNode', {
          llm_info: { model: PRIMARY, max_tokens: 50, temperature: 0, fallback_models: [FALLBACK] },
          user_message: '{{in.x}}',
          samples: 1,
          max_retries: 0,
        }),
        n('out', 'OutputNode', { output_map: { answer: 'best.response' } }),
      ],
      links: [l('in', 'best'), l('best', 'out')],
    };
    const wf = await engine.http.post('/wf/', { name: `best-fallback-${Math.random()}`, definition });
    const res = await engine.http.post(`/wf/${wf.body.id}/run/`, { initial_inputs: { in: { x: 'go' } } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.out.answer, 'sampled by the fallback');
    assert.deepEqual(asked, [PRIMARY, FALLBACK, PRIMARY, FALLBACK].map(providerName));
  });

  it('names the model that answered on a task without fallbacks too, with no failures', async () => {
    const { run, task } = await runWith(undefined, () => ({ status: 200, text: 'plain' }));
    assert.equal(run.status, 'COMPLETED');
    assert.equal(task.model, PRIMARY);
    assert.deepEqual(task.model_failures, []);
  });

  it('does not fall back when the provider refuses the request itself (400): the node fails with that refusal', async () => {
    const { run, task, asked } = await runWith([FALLBACK], () => ({ status: 400 }));
    assert.equal(run.status, 'FAILED');
    assert.deepEqual(asked, [providerName(PRIMARY)], 'a 400 is neither retried nor handed to another model');
    assert.equal(task.status, 'FAILED');
    assert.match(task.error ?? '', /400/);
    assert.deepEqual(task.model_failures, []);
  });

  it('fails the node naming every model and its failure when all of them fail', async () => {
    const { run, task, asked } = await runWith([FALLBACK, LAST], (m) =>
      m === providerName(LAST) ? { status: 429 } : { status: 503 },
    );
    assert.equal(run.status, 'FAILED');
    assert.equal(asked.length, 6, asked.join(', '));
    assert.deepEqual([...new Set(asked)], [PRIMARY, FALLBACK, LAST].map(providerName));
    assert.match(
      task.error ?? '',
      new RegExp(`Every model failed: ${PRIMARY}: .*503.*; ${FALLBACK}: .*503.*; ${LAST}: .*429`),
    );
  });

  it('records what the connection met when a provider cannot be reached (refused), and falls back', async () => {
    const closed = await freePort();
    // A key is used only with the base it was entered under: each base gets it again.
    const setBase = async (base: string) => {
      for (const [name, value] of Object.entries({ OPENAI_API_BASE: base, OPENAI_API_KEY: 'sk-test' })) {
        const res = await engine.http.post('/env-mgmt/', { name, value });
        assert.equal(res.status, 200, res.text);
      }
      await settingsReachWorkers();
    };
    await setBase(`http://127.0.0.1:${closed}/v1`);
    try {
      const { run, task, asked } = await runWith([FALLBACK], () => ({ status: 200, text: 'from the fallback' }));
      assert.equal(run.status, 'COMPLETED', run.message);
      assert.deepEqual(asked, [providerName(FALLBACK)], 'the unreachable provider got nothing');
      assert.equal(task.model, FALLBACK);
      assert.equal(task.model_failures.length, 1);
      assert.equal(task.model_failures[0]?.model, PRIMARY);
      assert.match(
        task.model_failures[0]?.error ?? '',
        new RegExp(`could not connect: Connection error\\. \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${closed}\\)`),
      );
    } finally {
      await setBase(`${fake.url}/v1`);
    }
  });

  it('refuses a fallback list that names an unknown model or more than three models at save (422), saving nothing', async () => {
    const before = (await engine.http.get('/wf/?page_size=100')).body.length;
    for (const fallbacks of [
      ['openai/not-a-model'],
      [FALLBACK, LAST, PRIMARY, 'anthropic/claude-3-opus-latest'],
      'x',
    ]) {
      const res = await engine.http.post('/wf/', {
        name: `bad-${Math.random()}`,
        definition: withFallbacks(fallbacks),
      });
      assert.equal(res.status, 422, `${JSON.stringify(fallbacks)}: ${res.text}`);
      assert.match(res.text, /fallback_models/);
    }
    assert.equal((await engine.http.get('/wf/?page_size=100')).body.length, before);
  });
});
