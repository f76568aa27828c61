import assert from 'node:assert/strict';
import { startApi, type TestApi } from '../support/api';
import { createUsageLedger } from '../../src/db/usage-ledger';
import { createBudgets } from '../../src/usage/budgets';
import { createPriceBook } from '../../src/usage/price-book';
import type { TaskRecord } from '../../src/engine/run-contract';

/** An ended task that called `model` for `tokens` prompt tokens (and as many completion tokens). */
const billed = (id: string, model: string, tokens: number): TaskRecord => ({
  id,
  node_id: `node-${id}`,
  status: 'COMPLETED',
  inputs: {},
  outputs: { text: 'hi' },
  error: null,
  start_time: '2026-12-01T10:00:00.000Z',
  end_time: '2026-12-01T10:00:01.000Z',
  subworkflow_output: null,
  usage: {
    prompt_tokens: tokens,
    completion_tokens: tokens,
    total_tokens: 2 * tokens,
    models: [{ model, prompt_tokens: tokens, completion_tokens: tokens, calls: 1, cost_nano_usd: tokens * 1000 }],
  },
});

/**
 * The usage ledger and spend entries are written as inserts (FerretDB's cheap write), against the
 * real database: a write made again (a retried save, a second worker) counts once, and a ledger
 * record written again with other figures holds the new ones.
 */
describe('e2e: usage records and spend entries, written once however often they are written', function () {
  this.timeout(60_000);
  let api: TestApi;
  before(async () => {
    api = await startApi();
  });
  after(() => api?.close());

  it('a ledger record written twice is one record; written again with other figures, it holds those', async () => {
    const ledger = createUsageLedger(api.models);
    const run = { runId: 'RL1', workflowId: 'SL1', apiKey: 'key:test' };
    await ledger.record([{ ...run, tasks: [billed('T1', 'openai/gpt-4o', 10)] }]);
    // Another process (a second worker, a retried save) writes the same, then the task's figures as they ended.
    await createUsageLedger(api.models).record([{ ...run, tasks: [billed('T1', 'openai/gpt-4o', 10)] }]);
    await createUsageLedger(api.models).record([
      { ...run, tasks: [billed('T1', 'openai/gpt-4o', 30), billed('T2', 'openai/gpt-4o', 5)] },
    ]);
    const records = await api.models.UsageRecord.find({ run_id: 'RL1' }).sort({ _id: 1 }).lean();
    assert.deepEqual(
      records.map((r) => [r._id, r.prompt_tokens, r.completion_tokens, r.cost_nano_usd, r.workflow_id, r.api_key]),
      [
        ['RL1:T1:openai/gpt-4o', 30, 30, 30_000, 'SL1', 'key:test'],
        ['RL1:T2:openai/gpt-4o', 5, 5, 5_000, 'SL1', 'key:test'],
      ],
    );
  });

  it('a spend entry written twice under one id counts once', async () => {
    const budgets = createBudgets(api.models, createPriceBook(api.models));
    const scope = { workflowId: 'SL2', runId: 'RL2' };
    await budgets.spend('RL2/call/1', null, scope, 4_000);
    await createBudgets(api.models, createPriceBook(api.models)).spend('RL2/call/1', null, scope, 4_000);
    const entries = await api.models.SpendEntry.find({ run_id: 'RL2' }).lean();
    assert.deepEqual(
      entries.map((e) => [e._id, e.workflow_id, e.cost_nano_usd, e.held ?? null]),
      [['RL2/call/1', 'SL2', 4_000, null]],
    );
  });
});
