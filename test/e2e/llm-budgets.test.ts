// Workflow budgets on model calls (PUT /api/wf/{id}/budget/): before each call its worst case is
// checked against what is left, and a call that would pass pauses the run for a person (or fails
// the node). Prices are set by override so the amounts are known: $10 per million tokens.
import assert from 'node:assert/strict';
import { type Engine, waitForRun } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { budgetedWorkflow as budgeted, priceAtTenDollars, twoCalls } from '../support/budgets';
import { startLlmEngine } from '../support/llm-engine';

const MODEL = 'openai/gpt-4o-mini';

type Task = { node_id: string; status: string; error: string | null; usage: { cost_usd: number | null } | null };

describe('e2e: workflow budgets pause or fail a run before the call that would pass them', function () {
  this.timeout(120_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  before(async () => {
    ({ engine, fake } = await startLlmEngine());
    await priceAtTenDollars(engine, MODEL);
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), usage: { input: 100, output: 10 } }));
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  const budgetedWorkflow = (budget: Record<string, unknown>) => budgeted(engine, twoCalls(MODEL), budget);
  async function pausedRun(workflowId: string) {
    const before = fake.requests.length;
    const started = await engine.http.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x: 'x' } } });
    assert.equal(started.status, 200, started.text);
    const run = await waitForRun(engine.http, started.body.id, (r) => r.status !== 'RUNNING' && r.status !== 'PENDING');
    assert.equal(run.status, 'PAUSED', run.message);
    assert.equal(fake.requests.length - before, 1, 'only the first call was made');
    return { runId: started.body.id as string, before };
  }
  const tasksOf = async (runId: string) => (await engine.http.get(`/run/${runId}/`)).body.tasks as Task[];

  it('stores a budget (GET, PUT, DELETE), refuses a malformed one (422) and an unknown workflow (404), and drops it with its workflow', async () => {
    const id = await budgetedWorkflow({ per_run_usd: 0.5, on_exceed: 'fail' });
    assert.deepEqual((await engine.http.get(`/wf/${id}/budget/`)).body, {
      workflow_id: id,
      per_run_usd: 0.5,
      per_day_usd: null,
      per_month_usd: null,
      on_exceed: 'fail',
    });
    for (const bad of [
      { on_exceed: 'pause' },
      { per_run_usd: -1, on_exceed: 'pause' },
      { per_run_usd: 1, on_exceed: 'ignore' },
      { per_run_usd: 1, on_exceed: 'pause', extra: true },
    ])
      assert.equal((await engine.http.put(`/wf/${id}/budget/`, bad)).status, 422, JSON.stringify(bad));
    assert.equal((await engine.http.get(`/wf/${id}/budget/`)).body.per_run_usd, 0.5, 'unchanged');
    assert.equal((await engine.http.put('/wf/S999999/budget/', { per_run_usd: 1, on_exceed: 'pause' })).status, 404);
    assert.equal((await engine.http.delete(`/wf/${id}/budget/`)).status, 204);
    assert.equal((await engine.http.get(`/wf/${id}/budget/`)).status, 404);
    assert.equal((await engine.http.delete(`/wf/${id}/budget/`)).status, 404);

    const doomed = await budgetedWorkflow({ per_month_usd: 2, on_exceed: 'pause' });
    assert.equal((await engine.http.delete(`/wf/${doomed}/`)).status, 204);
    assert.equal(await engine.api.models.WorkflowBudget.countDocuments({ _id: doomed }), 0, 'gone with its workflow');
  });

  it('per_run_usd $0.01, on_exceed pause: the run pauses before the second call, naming the budget; APPROVE makes the call once and the run completes', async () => {
    const id = await budgetedWorkflow({ per_run_usd: 0.01, on_exceed: 'pause' });
    const { runId, before } = await pausedRun(id);
    const inbox = (await engine.http.get('/wf/paused_workflows/?page_size=100')).body as Array<{
      run: { id: string };
      current_pause: { node_id: string; pause_message: string };
    }>;
    const listed = inbox.find((p) => p.run.id === runId);
    assert.equal(listed?.current_pause.node_id, 'second', JSON.stringify(listed));
    assert.match(
      listed?.current_pause.pause_message ?? '',
      /per_run_usd .*\$0\.01.*\$0\.0011 spent.*2000 max output tokens/,
    );
    const tasks = await tasksOf(runId);
    assert.equal(tasks.find((t) => t.node_id === 'first')?.usage?.cost_usd, 0.0011);
    assert.equal(tasks.find((t) => t.node_id === 'second')?.status, 'PAUSED');

    const approve = await engine.http.post(`/wf/process_pause_action/${runId}/`, {
      action: 'APPROVE',
      user_id: 'finance',
      comments: 'worth it',
      inputs: {},
    });
    assert.equal(approve.status, 200, approve.text);
    const run = await waitForRun(engine.http, runId);
    assert.equal(run.status, 'COMPLETED', run.message);
    assert.equal(fake.requests.length - before, 2, 'the second call was made once');
    assert.equal((await engine.http.get(`/run/${runId}/`)).body.outputs.out.answer, 'ok');
  });

  it('DECLINE fails the node the budget paused, naming the budget and who declined; the call is never made', async () => {
    const id = await budgetedWorkflow({ per_run_usd: 0.01, on_exceed: 'pause' });
    const { runId, before } = await pausedRun(id);
    const decline = await engine.http.post(`/wf/process_pause_action/${runId}/`, {
      action: 'DECLINE',
      user_id: 'finance',
      comments: null,
      inputs: {},
    });
    assert.equal(decline.status, 200, decline.text);
    const run = await waitForRun(engine.http, runId);
    assert.equal(run.status, 'FAILED');
    const second = (await tasksOf(runId)).find((t) => t.node_id === 'second');
    assert.equal(second?.status, 'FAILED');
    assert.match(second?.error ?? '', /per_run_usd.*declined by finance/);
    assert.equal(fake.requests.length - before, 1);
  });

  it('on_exceed fail: the node fails at once naming the budget, without calling the model', async () => {
    const id = await budgetedWorkflow({ per_run_usd: 0.01, on_exceed: 'fail' });
    const before = fake.requests.length;
    const res = await engine.http.post(`/wf/${id}/run/`, { initial_inputs: { in: { x: 'x' } } });
    assert.equal(res.status, 200, res.text);
    const [listed] = (await engine.http.get(`/wf/${id}/runs/`)).body as { id: string }[];
    const run = (await engine.http.get(`/run/${listed?.id}/`)).body;
    assert.equal(run.status, 'FAILED');
    assert.match(run.message, /Node 'second' .*Budget per_run_usd/);
    assert.equal(fake.requests.length - before, 1);
  });

  it('a prompt of one 100 000-character word (quadratic to encode whole) is counted in time: the run fails at its first call on its worst case', async () => {
    const id = await budgetedWorkflow({ per_run_usd: 0.01, on_exceed: 'fail' });
    const before = fake.requests.length;
    const started = await engine.http.post(`/wf/${id}/start_run/`, {
      initial_inputs: { in: { x: 'x'.repeat(100_000) } },
    });
    assert.equal(started.status, 200, started.text);
    const run = await waitForRun(engine.http, started.body.id);
    assert.equal(run.status, 'FAILED');
    assert.match(String(run.message), /Node 'first' .*Budget per_run_usd/);
    assert.equal(fake.requests.length - before, 0, 'the model was never called');
  });

  it('per_day_usd counts every run of the workflow that day: the run that would pass it pauses at its first call', async () => {
    // One run spends $0.0011 twice; a day budget of $0.0025 then leaves less than the next run's
    // first call may cost (its prompt's tokens plus 20 output tokens).
    const id = await budgetedWorkflow({ per_day_usd: 1, on_exceed: 'pause' });
    const first = await engine.http.post(`/wf/${id}/run/`, { initial_inputs: { in: { x: 'x' } } });
    assert.equal(first.status, 200, first.text);
    assert.equal((await engine.http.put(`/wf/${id}/budget/`, { per_day_usd: 0.0025, on_exceed: 'pause' })).status, 200);
    const { runId } = await pausedRunAt(id, 'first');
    assert.match(
      (
        (await engine.http.get('/wf/paused_workflows/?page_size=100')).body as Array<{
          run: { id: string };
          current_pause: { pause_message: string };
        }>
      ).find((p) => p.run.id === runId)?.current_pause.pause_message ?? '',
      /per_day_usd .*\$0\.0025.*\$0\.0022 spent/,
    );
    // The overview shows the same spending: two calls of 100 + 10 tokens at $10 per million each.
    const overview = await engine.http.get('/usage/budgets/');
    assert.equal(overview.status, 200, overview.text);
    const mine = (overview.body as Array<Record<string, unknown>>).find((b) => b.workflow_id === id);
    assert.deepEqual(
      mine && {
        ...mine,
        spent_today_usd: Number((mine.spent_today_usd as number).toFixed(10)),
        spent_this_month_usd: Number((mine.spent_this_month_usd as number).toFixed(10)),
      },
      {
        workflow_id: id,
        per_run_usd: null,
        per_day_usd: 0.0025,
        per_month_usd: null,
        on_exceed: 'pause',
        spent_today_usd: 0.0022,
        spent_this_month_usd: 0.0022,
      },
    );
  });

  async function pausedRunAt(workflowId: string, nodeId: string) {
    const started = await engine.http.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x: 'x' } } });
    const run = await waitForRun(engine.http, started.body.id, (r) => r.status !== 'RUNNING' && r.status !== 'PENDING');
    assert.equal(run.status, 'PAUSED', run.message);
    assert.equal((await tasksOf(started.body.id)).find((t) => t.node_id === nodeId)?.status, 'PAUSED');
    return { runId: started.body.id as string };
  }
});
