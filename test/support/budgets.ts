import assert from 'node:assert/strict';
import { type Engine, waitForRun } from './engine';
import { input, l, n } from './graphs';

/** Two calls: the first small (max 20 tokens out), the second may answer 2000 tokens ($0.02 at $10/Mtok). */
export const twoCalls = (model: string) => ({
  nodes: [
    input(),
    n('first', 'SingleLLMCallNode', { llm_info: { model, max_tokens: 20 }, user_message: 'one {{in.x}}' }),
    n('second', 'SingleLLMCallNode', { llm_info: { model, max_tokens: 2000 }, user_message: 'two {{first.output}}' }),
    n('out', 'OutputNode', { output_map: { answer: 'second.output' } }),
  ],
  links: [l('in', 'first'), l('first', 'second'), l('second', 'out')],
});

/** Prices the models at $10 per million tokens in and out (an override), so a test knows the amounts. */
export async function priceAtTenDollars(engine: Engine, ...models: string[]): Promise<void> {
  for (const model of models) {
    const price = await engine.http.put(`/usage/prices/${model}`, { input_usd_per_mtok: 10, output_usd_per_mtok: 10 });
    assert.equal(price.status, 200, price.text);
  }
}

/** A new workflow of `definition` with `budget` set; its id. */
export async function budgetedWorkflow(
  engine: Engine,
  definition: object,
  budget: Record<string, unknown>,
): Promise<string> {
  const wf = await engine.http.post('/wf/', { name: `budget-${Math.random()}`, definition });
  assert.equal(wf.status, 200, wf.text);
  const put = await engine.http.put(`/wf/${wf.body.id}/budget/`, budget);
  assert.equal(put.status, 200, put.text);
  return wf.body.id as string;
}

/** Starts a run of the workflow (`in.x` = "x") and waits until it has ended or paused; its whole record. */
export async function runToEnd(engine: Engine, workflowId: string) {
  const started = await engine.http.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x: 'x' } } });
  assert.equal(started.status, 200, started.text);
  await waitForRun(engine.http, started.body.id);
  return { runId: started.body.id as string, run: (await engine.http.get(`/run/${started.body.id}/`)).body };
}
