import assert from 'node:assert/strict';
import { type Engine, waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { input, l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';

// `output_json_schema` is the caller's, the reply is the model's: neither is trusted. A pattern
// that backtracks catastrophically on a short reply once held the api and its hosted worker (one
// event loop) for half a minute; heartbeats timed out and the retry froze the next worker.

const BOMB = '^(a+)+$';

/** in → llm (with this output_json_schema) → out, started with the model's reply queued; the run's id. */
async function startWithSchema(engine: Engine, fake: FakeLlmServer, schema: unknown, reply: string): Promise<string> {
  const definition = {
    nodes: [
      input(),
      n('llm', 'SingleLLMCallNode', {
        llm_info: { model: 'openai/gpt-4o-mini', max_tokens: 50, temperature: 0 },
        user_message: 'Answer: {{in.x}}',
        output_json_schema: JSON.stringify(schema),
      }),
      n('out', 'OutputNode'),
    ],
    links: [l('in', 'llm'), l('llm', 'out')],
  };
  const wf = (await engine.http.post('/wf/', { name: `schema-bomb-${Math.random()}`, definition })).body;
  fake.enqueue({ content: reply });
  const started = await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'go' } } });
  assert.equal(started.status, 200, JSON.stringify(started.body));
  return started.body.id as string;
}
const REPLY = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaa!';

describe('security: JSON Schema patterns run on model output are bounded', function () {
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

  it('a catastrophic output_json_schema pattern fails the node once, naming the pattern; the api answers meanwhile', async () => {
    const runId = await startWithSchema(
      engine,
      fake,
      { type: 'object', properties: { output: { type: 'string', pattern: BOMB } }, required: ['output'] },
      REPLY,
    );

    // The reply is on its way to the worker in this process: the api keeps answering.
    await until('the model to answer', () => fake.requests.some((r) => r.answered !== undefined));
    const meanwhile = await engine.http.get(`/run/${runId}/`);
    assert.equal(meanwhile.status, 200);
    assert.equal(meanwhile.body.id, runId);

    const run = await waitForRun(engine.http, runId);
    assert.equal(run.status, 'FAILED');
    const record = (await engine.http.get(`/run/${runId}/`)).body;
    const task = record.tasks.find((t: { node_id: string }) => t.node_id === 'llm');
    assert.equal(task.status, 'FAILED');
    assert.match(
      task.error,
      /^output_json_schema could not be checked against the model's reply: the pattern "\^\(a\+\)\+\$" ran over \d+ ms and was stopped/,
    );
    assert.equal(fake.requests.length, 1, 'the model was asked once: a stopped pattern is not retried');
  });

  it('a recursive output_json_schema whose branches re-walk a deeply nested reply is stopped at the bound too', async () => {
    // Each level's first branch walks the rest of the reply and then fails (`required`), the second
    // walks it again: 2^40 steps for a reply of 40 levels. No pattern in sight: the `$ref` bounds it.
    const walk = { type: 'object', properties: { a: { $ref: '#/$defs/node' } } };
    const schema = {
      $defs: { node: { anyOf: [{ ...walk, required: ['never'] }, walk] } },
      ...walk,
    };
    const nested = (depth: number): unknown => (depth === 0 ? {} : { a: nested(depth - 1) });
    const runId = await startWithSchema(engine, fake, schema, JSON.stringify(nested(40)));

    const run = await waitForRun(engine.http, runId);
    assert.equal(run.status, 'FAILED');
    const task = (await engine.http.get(`/run/${runId}/`)).body.tasks.find(
      (t: { node_id: string }) => t.node_id === 'llm',
    );
    assert.equal(task.status, 'FAILED');
    assert.match(
      task.error,
      /^output_json_schema could not be checked against the model's reply: the validation ran over \d+ ms and was stopped$/,
    );
  });
});
