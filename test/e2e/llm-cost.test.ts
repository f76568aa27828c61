import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { type FakeLlmServer, type ScriptedUsage, startFakeLlmServer } from '../support/fake-llm-server';
import { client } from '../support/http';
import { input, l, n } from '../support/graphs';
import { fakeProviderSettings, startLlmEngine } from '../support/llm-engine';
import { costAtPublishedPrice, publishedRates } from '../support/prices';

const MINI = 'openai/gpt-4o-mini';

/** Two model calls in a row, each answering JSON its OutputNode reads. */
const twoCalls = (model: string) => ({
  nodes: [
    input(),
    n('first', 'SingleLLMCallNode', {
      llm_info: { model, max_tokens: 100, temperature: 0 },
      user_message: 'one {{in.x}}',
    }),
    n('second', 'SingleLLMCallNode', {
      llm_info: { model, max_tokens: 100, temperature: 0 },
      user_message: 'two {{first.output}}',
    }),
    n('out', 'OutputNode', { output_map: { answer: 'second.output' } }),
  ],
  links: [l('in', 'first'), l('first', 'second'), l('second', 'out')],
});

type Usage = { prompt_tokens: number; completion_tokens: number; cost_usd: number | null; cost_note: string | null };
type Run = {
  id: string;
  workflow_id: string;
  status: string;
  usage: Usage | null;
  tasks: { node_id: string; usage: Usage | null }[];
};

describe('e2e: what a run’s model calls cost, at published or overridden prices', function () {
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

  async function run(model: string, tokens: [ScriptedUsage, ScriptedUsage]) {
    fake.enqueue(
      { content: JSON.stringify({ output: 'a' }), usage: tokens[0] },
      { content: JSON.stringify({ output: 'b' }), usage: tokens[1] },
    );
    const wf = (await engine.http.post('/wf/', { name: `cost-${Math.random()}`, definition: twoCalls(model) })).body;
    const res = await engine.http.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x: 'x' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [listed] = (await engine.http.get(`/wf/${wf.id}/runs/`)).body as { id: string }[];
    return (await engine.http.get(`/run/${listed!.id}/`)).body as Run;
  }
  const task = (r: Run, id: string) => r.tasks.find((t) => t.node_id === id)?.usage;

  it('prices each task’s calls at the model’s published price (as @pydantic/genai-prices computes it), and the run at the sum of its tasks', async () => {
    const listed = (await engine.http.get(`/usage/prices/${MINI}`)).body;
    assert.match(listed.source, /^@pydantic\/genai-prices \d/);
    const rates = publishedRates(MINI);
    assert.deepEqual(
      [listed.input_usd_per_mtok, listed.output_usd_per_mtok, listed.cached_input_usd_per_mtok],
      [rates.input, rates.output, rates.cachedInput],
      'the listing shows the package’s rates',
    );

    const tokens = [
      { input: 1200, output: 300 },
      { input: 800, output: 100 },
    ] as [{ input: number; output: number }, { input: number; output: number }];
    const r = await run(MINI, tokens);
    assert.equal(r.status, 'COMPLETED');
    const first = costAtPublishedPrice(MINI, [tokens[0]]);
    const second = costAtPublishedPrice(MINI, [tokens[1]]);
    assert.ok(first > 0);
    assert.deepEqual(task(r, 'first'), {
      prompt_tokens: 1200,
      completion_tokens: 300,
      total_tokens: 1500,
      cost_usd: first,
      cost_note: null,
      by_model: [{ model: MINI, prompt_tokens: 1200, completion_tokens: 300, calls: 1, cost_usd: first }],
    });
    assert.equal(task(r, 'second')?.cost_usd, second);
    assert.equal(task(r, 'out'), null, 'a node that called no model has no usage');
    assert.equal(r.usage?.cost_usd, costAtPublishedPrice(MINI, tokens));
    assert.equal(r.usage?.prompt_tokens, 2000);
  });

  it('prompt tokens read from the provider’s cache cost the cached rate, for OpenAI and Anthropic', async () => {
    const rates = publishedRates(MINI);
    assert.ok(rates.cachedInput !== null && rates.cachedInput < rates.input, 'the package has a cheaper cached rate');
    const cachedRun = await run(MINI, [
      { input: 1000, output: 100, cached: 600 },
      { input: 1000, output: 100 },
    ]);
    assert.equal(task(cachedRun, 'first')?.prompt_tokens, 1000, 'cached tokens are prompt tokens too');
    const nano = (usd: number) => Math.round(usd * 1e9);
    assert.equal(
      nano(task(cachedRun, 'first')?.cost_usd ?? 0),
      nano(costAtPublishedPrice(MINI, [{ input: 1000, output: 100, cached: 600 }])),
    );
    assert.ok((task(cachedRun, 'first')?.cost_usd ?? 0) < (task(cachedRun, 'second')?.cost_usd ?? 0));

    const haiku = 'anthropic/claude-3-5-haiku-latest';
    const anthropic = await run(haiku, [
      { input: 2000, output: 50, cached: 1500 },
      { input: 10, output: 10 },
    ]);
    assert.equal(
      task(anthropic, 'first')?.prompt_tokens,
      2000,
      'input_tokens plus the cache reads Anthropic counts apart',
    );
    assert.equal(
      nano(task(anthropic, 'first')?.cost_usd ?? 0),
      nano(costAtPublishedPrice(haiku, [{ input: 2000, output: 50, cached: 1500 }])),
    );
  });

  it('an override prices the calls made after it; costs already recorded stay; DELETE restores the published price', async () => {
    const before = await run(MINI, [
      { input: 100, output: 100 },
      { input: 100, output: 100 },
    ]);
    const put = await engine.http.put(`/usage/prices/${MINI}`, { input_usd_per_mtok: 1, output_usd_per_mtok: 2 });
    assert.equal(put.status, 200, put.text);
    const { batch, ...price } = put.body;
    assert.deepEqual(price, {
      model: MINI,
      input_usd_per_mtok: 1,
      output_usd_per_mtok: 2,
      cached_input_usd_per_mtok: null,
      source: 'override',
      note: null,
    });
    // In a provider batch the override is billed at OpenAI's published batch share, half.
    assert.deepEqual([batch.input_usd_per_mtok, batch.output_usd_per_mtok], [0.5, 1]);
    const after = await run(MINI, [
      { input: 1000, output: 500 },
      { input: 3000, output: 0 },
    ]);
    assert.equal(task(after, 'first')?.cost_usd, (1000 * 1 + 500 * 2) / 1e6);
    assert.equal(after.usage?.cost_usd, (1000 * 1 + 500 * 2 + 3000 * 1) / 1e6);
    const again = (await engine.http.get(`/run/${before.id}/`)).body as Run;
    assert.deepEqual(again.usage, before.usage, 'a recorded cost is what the calls cost when they were made');

    const removed = await engine.http.delete(`/usage/prices/${MINI}`);
    assert.equal(removed.status, 200, removed.text);
    assert.match(removed.body.source, /genai-prices/);
    assert.equal((await engine.http.delete(`/usage/prices/${MINI}`)).status, 404, 'no override left to remove');
  });

  it('a model with no known price costs null with a note saying so, never a made-up zero', async () => {
    const settings = await engine.http.post('/env-mgmt/', { name: 'OLLAMA_BASE_URL', value: fake.url });
    assert.equal(settings.status, 200, settings.text);
    const r = await run('ollama/phi4', [
      { input: 50, output: 5 },
      { input: 50, output: 5 },
    ]);
    assert.equal(r.status, 'COMPLETED');
    assert.equal(task(r, 'first')?.prompt_tokens, 50);
    assert.equal(task(r, 'first')?.cost_usd, null);
    assert.match(task(r, 'first')?.cost_note ?? '', /No price for ollama\/phi4: set one with PUT \/api\/usage\/prices/);
    assert.equal(r.usage?.cost_usd, null);
    const listed = (await engine.http.get('/usage/prices/ollama/phi4')).body;
    assert.equal(listed.source, null);
    assert.equal(listed.input_usd_per_mtok, null);
  });

  it('the ledger (GET /api/usage/) totals tokens, cost, calls and runs per workflow, model and day, equal to the runs’ tasks', async () => {
    const settings = await engine.http.post('/env-mgmt/', { name: 'OLLAMA_BASE_URL', value: fake.url });
    assert.equal(settings.status, 200, settings.text);
    const from = new Date().toISOString();
    const a = await run(MINI, [
      { input: 500, output: 50 },
      { input: 400, output: 40 },
    ]);
    const b = await run(MINI, [
      { input: 300, output: 30 },
      { input: 200, output: 20 },
    ]);
    const local = await run('ollama/phi4', [
      { input: 70, output: 7 },
      { input: 60, output: 6 },
    ]);
    const to = new Date(Date.now() + 1000).toISOString();
    const ledger = async (groupBy: string, range = `&from=${from}&to=${to}`) => {
      const res = await engine.http.get(`/usage/?group_by=${groupBy}${range}`);
      assert.equal(res.status, 200, res.text);
      return res.body as { groups: ({ key: string } & Record<string, number>)[]; total: Record<string, number> };
    };
    const nano = (usd: number | null | undefined) => Math.round((usd ?? 0) * 1e9);

    const byWorkflow = await ledger('workflow');
    assert.equal(byWorkflow.groups.length, 3);
    for (const r of [a, b, local]) {
      const group = byWorkflow.groups.find((g) => g.key === r.workflow_id);
      assert.ok(group, `${r.workflow_id} in ${JSON.stringify(byWorkflow.groups)}`);
      assert.equal(group.prompt_tokens, r.usage?.prompt_tokens);
      assert.equal(group.completion_tokens, r.usage?.completion_tokens);
      assert.equal(nano(group.cost_usd), nano(r.usage?.cost_usd), 'priced calls, to the nano-dollar');
      assert.equal(group.calls, 2);
      assert.equal(group.runs, 1);
    }
    assert.equal(byWorkflow.groups.find((g) => g.key === local.workflow_id)?.unpriced_calls, 2);
    assert.equal(nano(byWorkflow.total.cost_usd), nano(a.usage?.cost_usd) + nano(b.usage?.cost_usd));
    assert.deepEqual([byWorkflow.total.calls, byWorkflow.total.runs, byWorkflow.total.unpriced_calls], [6, 3, 2]);

    const byModel = await ledger('model');
    assert.deepEqual(
      byModel.groups.map((g) => [g.key, g.prompt_tokens, g.runs, nano(g.cost_usd), g.unpriced_calls]),
      [
        ['ollama/phi4', 130, 1, 0, 2],
        [MINI, 1400, 2, nano(a.usage?.cost_usd) + nano(b.usage?.cost_usd), 0],
      ],
    );
    const byDay = await ledger('day');
    assert.ok(byDay.groups.every((g) => /^\d{4}-\d{2}-\d{2}$/.test(g.key)));
    assert.deepEqual(byDay.total, byWorkflow.total);
    assert.equal(
      byDay.groups.reduce((n, g) => n + g.calls, 0),
      6,
    );

    // The runs of the tests before fall outside [from, to): the totals above are this test's alone.
    const past = await ledger('workflow', '&from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z');
    assert.deepEqual([past.groups.length, past.total.calls], [0, 0]);
    for (const query of ['group_by=user', 'group_by=workflow&from=yesterday', 'group_by=workflow&limit=5']) {
      const res = await engine.http.get(`/usage/?${query}`);
      assert.equal(res.status, 422, `${query}: ${res.status} ${res.text}`);
    }
  });

  it('a batch’s rows (run inline) are in the ledger too, one run per row', async () => {
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'r' }), usage: { input: 40, output: 4 } }));
    try {
      const fd = new FormData();
      fd.append('file', new Blob(['x\na\nb\nc'], { type: 'text/csv' }), 'rows.csv');
      const ds = (await engine.http.post('/ds/?name=cost-rows', fd)).body as { id: string };
      const wf = (await engine.http.post('/wf/', { name: `cost-batch-${Math.random()}`, definition: twoCalls(MINI) }))
        .body as { id: string };
      const parent = (await engine.http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id })).body as {
        id: string;
      };
      const ended = await waitForRun(engine.http, parent.id, undefined, 60_000);
      assert.equal(ended.status, 'COMPLETED', JSON.stringify(ended));
      const group = (
        (await engine.http.get('/usage/?group_by=workflow')).body as { groups: Record<string, number | string>[] }
      ).groups.find((g) => g.key === wf.id);
      assert.deepEqual(
        group && [group.runs, group.calls, group.prompt_tokens, Math.round(Number(group.cost_usd) * 1e9)],
        [3, 6, 240, Math.round(costAtPublishedPrice(MINI, Array(6).fill({ input: 40, output: 4 })) * 1e9)],
      );
    } finally {
      fake.respondWith(undefined);
    }
  });

  it('refuses a price that is not a finite, non-negative number per million, or has other fields (422), and unknown models (404): nothing stored', async () => {
    const bad: Record<string, unknown>[] = [
      { input_usd_per_mtok: -1, output_usd_per_mtok: 1 },
      { input_usd_per_mtok: '1', output_usd_per_mtok: 1 },
      { input_usd_per_mtok: 1e300, output_usd_per_mtok: 1 },
      { input_usd_per_mtok: 1 },
      { input_usd_per_mtok: 1, output_usd_per_mtok: 1, $set: { input_usd_per_mtok: 0 } },
      JSON.parse('{"input_usd_per_mtok": 1, "output_usd_per_mtok": 1, "__proto__": {"source": "override"}}'),
    ];
    for (const body of bad) {
      const res = await engine.http.put(`/usage/prices/${MINI}`, body);
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.status} ${res.text}`);
    }
    for (const path of [
      '/usage/prices/openai/no-such-model',
      '/usage/prices/$where/x',
      '/usage/prices/constructor/prototype',
    ]) {
      const res = await engine.http.put(path, { input_usd_per_mtok: 1, output_usd_per_mtok: 1 });
      assert.equal(res.status, 404, `${path}: ${res.status} ${res.text}`);
    }
    assert.equal(await engine.api.models.ModelPrice.countDocuments(), 0, 'no price stored');
    const listed = (await engine.http.get('/usage/prices/')).body as { model: string; source: string | null }[];
    assert.ok(listed.some((p) => p.model === MINI && /genai-prices/.test(p.source ?? '')));
    assert.ok(!listed.some((p) => p.source === 'override'));
  });
});

describe('e2e: the ledger by who started the runs (group_by=api_key)', function () {
  this.timeout(120_000);
  const KEYS = { a: 'spur-ledger-key-a-7f3c1e9b2d', b: 'spur-ledger-key-b-4a8e6c0f1d' };
  let engine: Engine;
  let fake: FakeLlmServer;
  let as: Record<keyof typeof KEYS, ReturnType<typeof client>>;
  before(async () => {
    engine = await startEngine({ SPUR_API_KEY_HASHES: `${hashApiKey(KEYS.a)},${hashApiKey(KEYS.b)}` });
    as = {
      a: client(engine.api.baseUrl, { Authorization: `Bearer ${KEYS.a}` }),
      b: client(engine.api.baseUrl, { 'X-API-Key': KEYS.b }),
    };
    fake = await startFakeLlmServer();
    for (const [name, value] of Object.entries(fakeProviderSettings(fake)))
      assert.equal((await as.a.post('/env-mgmt/', { name, value })).status, 200);
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  it('groups each key’s runs under a short id of its digest, never the key', async () => {
    const runAs = async (who: keyof typeof KEYS, times: number) => {
      const wf = (await as[who].post('/wf/', { name: `by-${who}-${Math.random()}`, definition: twoCalls(MINI) })).body;
      for (let i = 0; i < times; i++) {
        const res = await as[who].post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x: who } } });
        assert.equal(res.status, 200, res.text);
      }
    };
    await runAs('a', 2);
    await runAs('b', 1);
    const res = await as.b.get('/usage/?group_by=api_key');
    assert.equal(res.status, 200, res.text);
    const idOf = (key: string) => `key:${hashApiKey(key).slice('sha256:'.length, 'sha256:'.length + 12)}`;
    const groups = (res.body as { groups: { key: string; runs: number; calls: number }[] }).groups;
    assert.deepEqual(
      groups.map((g) => [g.key, g.runs, g.calls]),
      [
        [idOf(KEYS.a), 2, 4],
        [idOf(KEYS.b), 1, 2],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    assert.ok(!res.text.includes(KEYS.a) && !res.text.includes(KEYS.b), 'no key in the answer');
    assert.equal((await client(engine.api.baseUrl).get('/usage/?group_by=api_key')).status, 401);
  });
});
