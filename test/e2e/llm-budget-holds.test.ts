// Budgets hold under concurrency: a call's worst case is held before it goes out, so calls checked
// at the same moment (parallel branches, BestOfN samples, concurrent runs, batch rows) cannot all
// pass on one reading of what is spent. And every answered call is spent, whatever its node does.
// Prices are set by override ($10 per million tokens in and out) so the amounts are known.
import assert from 'node:assert/strict';
import { type Engine, waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { budgetedWorkflow, priceAtTenDollars, runToEnd as runWorkflowToEnd } from '../support/budgets';
import { input, l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';

const MODEL = 'openai/gpt-4o-mini';
const REASONING = 'openai/o3-mini';
const NANO = 1e9;
/** Each answer reports 100 prompt and 1000 output tokens: $0.011 at $10/Mtok. */
const ANSWER = { input: 100, output: 1000 };
const ANSWER_USD = 0.011;
/**
 * A call asking for at most 1000 output tokens is held at $0.01 plus its prompt (under 100 tokens
 * here, so under $0.011): $0.0125 has room for one hold, not for two, nor for a hold beside an answer.
 */
const ROOM_FOR_ONE = 0.0125;
/** Room for two holds or answers, not for a third beside them. */
const ROOM_FOR_TWO = 0.0235;
/** A small answer: 100 prompt and 10 output tokens, $0.0011. */
const SMALL = { input: 100, output: 10 };
const SMALL_USD = 0.0011;

const bestOfN = (samples: number) => ({
  nodes: [
    input(),
    n('best', 'BestOfNNode', { llm_info: { model: MODEL, max_tokens: 1000 }, user_message: '{{in.x}}', samples }),
  ],
  links: [l('in', 'best')],
});

const llm = (id: string, extra: Record<string, unknown> = {}) =>
  n(id, 'SingleLLMCallNode', {
    llm_info: { model: MODEL, max_tokens: 1000 },
    user_message: `${id} {{in.x}}`,
    ...extra,
  });

type Task = {
  node_id: string;
  status: string;
  error: string | null;
  usage: { prompt_tokens: number; completion_tokens: number; cost_usd: number | null } | null;
};

describe('e2e: budgets hold each call before it goes out, and count every answered call', function () {
  this.timeout(180_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  before(async () => {
    ({ engine, fake } = await startLlmEngine());
    await priceAtTenDollars(engine, MODEL, REASONING);
  });
  beforeEach(() => {
    // Answers take a while, so every call of a test is out at once: the race the holds close.
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), usage: ANSWER, delayMs: 700 }));
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  const budgeted = (definition: object, budget: Record<string, unknown>) =>
    budgetedWorkflow(engine, definition, budget);
  /** Runs the workflow to its end; `calls()` counts the requests the provider got since it started. */
  async function runToEnd(workflowId: string) {
    const before = fake.requests.length;
    const { runId, run } = await runWorkflowToEnd(engine, workflowId);
    return { runId, run, calls: () => fake.requests.length - before };
  }
  const tasksOf = async (runId: string) => (await engine.http.get(`/run/${runId}/`)).body.tasks as Task[];
  /** What the workflow's runs spent, as the budget counts it (settled holds and answered calls). */
  async function spentUsd(workflowId: string): Promise<number> {
    const entries = await engine.api.models.SpendEntry.find({ workflow_id: workflowId }).lean();
    return entries.reduce((sum, e) => sum + e.cost_nano_usd, 0) / NANO;
  }

  it('eight parallel SingleLLMCallNodes under a per_run_usd with room for one call: one call goes out, the run fails naming the budget', async () => {
    const branches = Array.from({ length: 8 }, (_, i) => `b${i}`);
    const id = await budgeted(
      {
        nodes: [input(), ...branches.map((b) => llm(b))],
        links: branches.map((b) => l('in', b)),
      },
      { per_run_usd: ROOM_FOR_ONE, on_exceed: 'fail' },
    );
    const { run, calls } = await runToEnd(id);
    // The run fails with the first refused branch; the call that went out is settled when it answers.
    assert.equal(run.status, 'FAILED');
    assert.match(run.message ?? '', /Budget per_run_usd/);
    await until('the one answer spent, no hold left', async () => Math.abs((await spentUsd(id)) - ANSWER_USD) < 1e-9);
    assert.equal(calls(), 1, 'one call went out');
  });

  it('three concurrent start_runs under a per_day_usd with room for one call: one call among them', async () => {
    const id = await budgeted(
      { nodes: [input(), llm('ask')], links: [l('in', 'ask')] },
      { per_day_usd: ROOM_FOR_ONE, on_exceed: 'fail' },
    );
    const before = fake.requests.length;
    const starts = await Promise.all(
      [1, 2, 3].map(() => engine.http.post(`/wf/${id}/start_run/`, { initial_inputs: { in: { x: 'x' } } })),
    );
    const runs = await Promise.all(starts.map((s) => waitForRun(engine.http, s.body.id)));
    assert.deepEqual(runs.map((r) => r.status).sort(), ['COMPLETED', 'FAILED', 'FAILED']);
    for (const r of runs.filter((r) => r.status === 'FAILED')) assert.match(r.message ?? '', /Budget per_day_usd/);
    assert.equal(fake.requests.length - before, 1);
  });

  it('a burst of four webhook deliveries under a per_day_usd with room for one call: one call among their runs', async () => {
    const id = await budgeted(
      { nodes: [input(), llm('ask')], links: [l('in', 'ask')] },
      { per_day_usd: ROOM_FOR_ONE, on_exceed: 'fail' },
    );
    const trigger = await engine.http.post(`/wf/${id}/triggers/`, { name: 'burst', input_mapping: { x: '/x' } });
    assert.equal(trigger.status, 200, trigger.text);
    const hookUrl = new URL(trigger.body.url as string, engine.api.baseUrl).href;
    const before = fake.requests.length;
    const deliveries = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        fetch(hookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"x":"${i}"}` }),
      ),
    );
    const runIds = await Promise.all(
      deliveries.map(async (d) => {
        assert.equal(d.status, 202);
        return ((await d.json()) as { run_id: string }).run_id;
      }),
    );
    const runs = await Promise.all(runIds.map((runId) => waitForRun(engine.http, runId)));
    assert.deepEqual(runs.map((r) => r.status).sort(), ['COMPLETED', 'FAILED', 'FAILED', 'FAILED']);
    assert.equal(fake.requests.length - before, 1);
  });

  it('BestOfN samples under a per_run_usd with room for one call: one sample is asked, the node fails naming the budget', async () => {
    const id = await budgeted(bestOfN(4), { per_run_usd: ROOM_FOR_ONE, on_exceed: 'fail' });
    const { run, calls } = await runToEnd(id);
    assert.equal(run.status, 'FAILED');
    assert.match(run.message ?? '', /Budget per_run_usd/);
    assert.equal(calls(), 1, 'one sample was asked for');
  });

  it('a batch of six rows under a per_day_usd with room for two calls: two rows call the model', async () => {
    const id = await budgeted(
      { nodes: [input(), llm('ask')], links: [l('in', 'ask')] },
      { per_day_usd: ROOM_FOR_TWO, on_exceed: 'fail' },
    );
    const csv = ['x', ...Array.from({ length: 6 }, (_, i) => `row${i}`)].join('\n');
    const fd = new FormData();
    fd.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
    const ds = await engine.http.post(`/ds/?name=holds-${Math.random()}`, fd);
    assert.equal(ds.status, 200, ds.text);
    const before = fake.requests.length;
    const parent = await engine.http.post(`/wf/${id}/start_batch_run/`, { dataset_id: ds.body.id, mini_batch_size: 6 });
    assert.equal(parent.status, 200, parent.text);
    await waitForRun(engine.http, parent.body.id, (r) => !['PENDING', 'RUNNING'].includes(r.status), 120_000);
    assert.equal(fake.requests.length - before, 2);
  });

  it('a reasoning model that takes no max_tokens (its 16384 is not sent) is held at its maximum output, not its prompt alone: a $0.01 budget refuses the call', async () => {
    const id = await budgeted(
      {
        nodes: [
          input(),
          n('think', 'SingleLLMCallNode', {
            llm_info: { model: REASONING, max_tokens: 16384 },
            user_message: 'q {{in.x}}',
          }),
        ],
        links: [l('in', 'think')],
      },
      { per_run_usd: 0.01, on_exceed: 'fail' },
    );
    const { run, calls } = await runToEnd(id);
    assert.equal(run.status, 'FAILED');
    assert.match(run.message ?? '', /Budget per_run_usd .* \+ 100000 max output tokens/);
    assert.equal(calls(), 0, 'no request was sent');
  });

  it('a BestOfN node that fails after its samples were answered counts every answered call in the ledger and the run usage', async () => {
    // Samples answer; every rating answers with text that is no rating, so the node fails.
    fake.respondWith((req) => {
      const system = String((req.body.messages as { content: unknown }[])[0]?.content);
      const content = system.startsWith('Rate') ? 'not a rating' : JSON.stringify({ response: 'a sample' });
      return { content, usage: SMALL };
    });
    const id = await budgeted(bestOfN(1), { per_month_usd: 100, on_exceed: 'fail' });
    const { runId, run, calls } = await runToEnd(id);
    assert.equal(run.status, 'FAILED');
    assert.equal(calls(), 2, 'the sample and its rating were answered');
    const best = (await tasksOf(runId)).find((t) => t.node_id === 'best');
    assert.equal(best?.status, 'FAILED');
    assert.deepEqual(
      { prompt: best?.usage?.prompt_tokens, completion: best?.usage?.completion_tokens },
      { prompt: 200, completion: 20 },
    );
    assert.ok(Math.abs((best?.usage?.cost_usd ?? 0) - 2 * SMALL_USD) < 1e-9, JSON.stringify(best?.usage));
    const runUsage = (await engine.http.get(`/run/${runId}/`)).body.usage;
    assert.ok(Math.abs(runUsage.cost_usd - 2 * SMALL_USD) < 1e-9, JSON.stringify(runUsage));
    assert.ok(Math.abs((await spentUsd(id)) - 2 * SMALL_USD) < 1e-9);
  });
});
