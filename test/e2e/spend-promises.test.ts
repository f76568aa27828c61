// What budgets promise about spending (docs/llm-and-agents.md, Budgets): the month's budget is
// enforced, a model with no price is neither checked nor given a cost, and a write of spending
// that is retried counts once. Prices are set by override so the amounts are known: $10 per
// million tokens, 110 tokens ($0.0011) a call.
import assert from 'node:assert/strict';
import type { Engine } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { budgetedWorkflow, priceAtTenDollars, runToEnd, twoCalls } from '../support/budgets';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { attachFakeLlm, startLlmEngine } from '../support/llm-engine';
import { startApi } from '../support/api';
import { stack } from '../support/stack';
import { type TcpRelay, startTcpRelay } from '../support/tcp-relay';
import { type TestWorker, startWorker } from '../support/worker';

const MODEL = 'openai/gpt-4o-mini';
const UNPRICED = 'ollama/phi4';

type Task = { node_id: string; status: string; usage: { cost_usd: number | null; cost_note: string | null } | null };
type Paused = { run: { id: string }; current_pause: { node_id: string; pause_message: string } };

/** One call between the input and the output. */
const oneCall = (model: string) => ({
  nodes: [
    input(),
    n('first', 'SingleLLMCallNode', { llm_info: { model, max_tokens: 20 }, user_message: 'one {{in.x}}' }),
    n('out', 'OutputNode', { output_map: { answer: 'first.output' } }),
  ],
  links: [l('in', 'first'), l('first', 'out')],
});

/** Every call answers 100 prompt and 10 completion tokens. */
function answerEveryCall(fake: FakeLlmServer): void {
  fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), usage: { input: 100, output: 10 } }));
}

describe('e2e: budgets count spending as promised', function () {
  this.timeout(180_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  before(async () => {
    ({ engine, fake } = await startLlmEngine());
    await priceAtTenDollars(engine, MODEL);
    const ollama = await engine.http.post('/env-mgmt/', { name: 'OLLAMA_BASE_URL', value: fake.url });
    assert.equal(ollama.status, 200, ollama.text);
    answerEveryCall(fake);
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  it('per_month_usd counts the runs before: once a run has spent $0.0022 of $0.0023, the next run fails at its first call, naming per_month_usd, without calling the model', async () => {
    const id = await budgetedWorkflow(engine, twoCalls(MODEL), { per_month_usd: 1, on_exceed: 'fail' });
    const first = await runToEnd(engine, id);
    assert.equal(first.run.status, 'COMPLETED', first.run.message);
    // The next run's first call may cost its prompt's tokens plus 20: more than the $0.0001 left.
    const put = await engine.http.put(`/wf/${id}/budget/`, { per_month_usd: 0.0023, on_exceed: 'fail' });
    assert.equal(put.status, 200, put.text);
    const before = fake.requests.length;
    const second = await runToEnd(engine, id);
    assert.equal(second.run.status, 'FAILED');
    assert.match(
      second.run.message,
      /Node 'first' .*Budget per_month_usd of workflow S\d+ \(\$0\.0023\) would be passed: \$0\.0022 spent/,
    );
    assert.equal(fake.requests.length - before, 0, 'the model was never called');
  });

  it('a model with no price is not checked against the budget and has no cost: its run completes under a $0.000001 budget, its tasks and the ledger show no cost (unpriced_calls)', async () => {
    const id = await budgetedWorkflow(engine, twoCalls(UNPRICED), { per_run_usd: 0.000001, on_exceed: 'fail' });
    const before = fake.requests.length;
    const { run } = await runToEnd(engine, id);
    assert.equal(run.status, 'COMPLETED', run.message);
    assert.equal(fake.requests.length - before, 2, 'both calls were made');
    for (const task of (run.tasks as Task[]).filter((t) => ['first', 'second'].includes(t.node_id))) {
      assert.equal(task.usage?.cost_usd, null, task.node_id);
      assert.match(task.usage?.cost_note ?? '', /No price for ollama\/phi4/);
    }
    const ledger = await engine.http.get('/usage/?group_by=workflow');
    assert.equal(ledger.status, 200, ledger.text);
    const group = (
      ledger.body.groups as { key: string; cost_usd: number; calls: number; unpriced_calls: number }[]
    ).find((g) => g.key === id);
    assert.deepEqual(group && [group.calls, group.unpriced_calls, group.cost_usd], [2, 2, 0]);
  });
});

/** An OP_MSG command on `collection` whose verb is one of `verbs`: its first BSON element, a string. */
function commandOn(collection: string, ...verbs: string[]): (message: Buffer) => boolean {
  const name = Buffer.from(`${collection}\0`);
  const length = Buffer.alloc(4);
  length.writeInt32LE(name.length);
  const patterns = verbs.map((verb) => Buffer.concat([Buffer.from([0x02]), Buffer.from(`${verb}\0`), length, name]));
  return (message) => patterns.some((p) => message.includes(p));
}

describe('e2e: a write of spending retried after its answer was lost counts once', function () {
  this.timeout(180_000);
  let engine: Engine;
  let worker: TestWorker;
  let relay: TcpRelay;
  let fake: FakeLlmServer;
  before(async () => {
    // The worker reaches FerretDB through a relay that can lose an answer; the api goes direct.
    const api = await startApi();
    engine = { api, http: client(api.baseUrl), close: () => api.close() };
    const direct = new URL(stack.mongoUri);
    relay = await startTcpRelay({ host: direct.hostname, port: Number(direct.port) }, 'mongodb');
    const viaRelay = new URL(stack.mongoUri);
    viaRelay.host = relay.address;
    worker = await startWorker({ ...api.env, SPUR_MONGODB_URI: viaRelay.toString() });
    fake = await attachFakeLlm(engine);
    await priceAtTenDollars(engine, MODEL);
    answerEveryCall(fake);
  });
  after(async () => {
    await worker?.stop();
    await engine?.close();
    await relay?.close();
    await fake?.close();
  });

  it('the first call’s spending is written, its answer lost, the write retried: the second call’s check counts $0.0011 spent, not $0.0022', async () => {
    // $0.0011 spent fits $0.002; the second call's worst case ($0.02) does not: the run pauses there.
    const id = await budgetedWorkflow(engine, twoCalls(MODEL), { per_run_usd: 0.002, on_exceed: 'pause' });
    relay.loseAnswerTo(commandOn('spend_entries', 'update', 'insert'));
    const { runId, run } = await runToEnd(engine, id);
    assert.equal(run.status, 'PAUSED', run.message);
    assert.equal(relay.lostAnswers(), 1, 'the answer to the spending write was lost');
    const inbox = (await engine.http.get('/wf/paused_workflows/?page_size=100')).body as Paused[];
    const pause = inbox.find((p) => p.run.id === runId)?.current_pause;
    assert.equal(pause?.node_id, 'second', JSON.stringify(pause));
    assert.match(pause?.pause_message ?? '', /per_run_usd .*\(\$0\.002\) would be passed: \$0\.0011 spent/);
    assert.equal(fake.requests.length, 1, 'one call made');
  });

  it('with no budget, the call’s spending is written all the same, its answer lost, the write retried: a budget set afterwards shows $0.0011 spent today, not $0.0022', async () => {
    const wf = await engine.http.post('/wf/', { name: `unbudgeted-${Math.random()}`, definition: oneCall(MODEL) });
    assert.equal(wf.status, 200, wf.text);
    const id = wf.body.id as string;
    relay.loseAnswerTo(commandOn('spend_entries', 'update', 'insert'));
    const lostBefore = relay.lostAnswers();
    const { run } = await runToEnd(engine, id);
    assert.equal(run.status, 'COMPLETED', run.message);
    assert.equal(relay.lostAnswers() - lostBefore, 1, 'the answer to the spending write was lost');
    const put = await engine.http.put(`/wf/${id}/budget/`, { per_day_usd: 1, on_exceed: 'fail' });
    assert.equal(put.status, 200, put.text);
    const overview = await engine.http.get('/usage/budgets/');
    assert.equal(overview.status, 200, overview.text);
    const mine = (overview.body as Array<{ workflow_id: string; spent_today_usd: number }>).find(
      (b) => b.workflow_id === id,
    );
    assert.equal(mine?.spent_today_usd, 0.0011, JSON.stringify(mine));
  });
});
