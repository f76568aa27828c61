import assert from 'node:assert/strict';
import type { Engine } from '../support/engine';
import type { FakeLlmServer } from '../support/fake-llm-server';
import { l, n } from '../support/graphs';
import { startLlmEngine } from '../support/llm-engine';

const MODEL = { model: 'openai/gpt-4o', max_tokens: 200, temperature: 0.2 };
type Message = { role: string; content: unknown };
const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content));

function agentWorkflow(system: string, user: string) {
  return {
    nodes: [
      n('src', 'InputNode', { output_schema: { name: 'string', topic: 'string', task: 'string' } }),
      n('agent', 'AgentNode', { llm_info: MODEL, system_message: system, user_message: user, max_iterations: 2 }),
      n('out', 'OutputNode', { output_map: { answer: 'agent.output' } }),
    ],
    links: [l('src', 'agent'), l('agent', 'out')],
  };
}

describe("e2e: an AgentNode's message templates are rendered with the run's values", function () {
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

  async function run(definition: unknown) {
    const wf = (await engine.http.post('/wf/', { name: `agent-${Math.random()}`, definition })).body;
    const res = await engine.http.post(`/wf/${wf.id}/run/`, {
      initial_inputs: { src: { name: 'Ada', topic: 'sums', task: 'add 2 and 2' } },
    });
    const [record] = (await engine.http.get(`/wf/${wf.id}/runs/`)).body;
    return { res, record };
  }

  it('sends the provider the system and user messages filled in from the run', async () => {
    fake.requests.length = 0;
    fake.enqueue({ content: JSON.stringify({ output: 'four' }) });
    const { res } = await run(
      agentWorkflow('You help {{src.name}} with {{src.topic}}.', 'Task: {{ src.task }} (for {{src.name}})'),
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.out, { answer: 'four' });
    assert.equal(fake.requests.length, 1);
    const messages = fake.requests[0]?.body.messages as Message[];
    assert.deepEqual(
      messages.map((m) => m.role),
      ['system', 'user'],
    );
    // The system message, then the output schema instructions the node adds.
    assert.match(text(messages[0]?.content), /^You help Ada with sums\.\n\nRespond with a single JSON object/);
    assert.equal(text(messages[1]?.content), 'Task: add 2 and 2 (for Ada)');
  });

  it('fails a template that reaches into something undefined, without calling the provider', async () => {
    fake.requests.length = 0;
    const { res, record } = await run(agentWorkflow('You help {{nobody.here}}.', '{{src.task}}'));
    assert.equal(res.status, 200, res.text);
    assert.equal('out' in res.body, false, JSON.stringify(res.body));
    assert.equal(record.status, 'FAILED');
    assert.match(record.tasks.find((t: { node_id: string }) => t.node_id === 'agent').error, /nobody/);
    assert.equal(fake.requests.length, 0);
  });
});
