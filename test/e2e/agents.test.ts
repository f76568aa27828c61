import assert from 'node:assert/strict';
import { type SplitEngine, startSplitEngine, waitForRun } from '../support/engine';
import { attachFakeLlm } from '../support/llm-engine';
import { costAtPublishedPrice } from '../support/prices';
import { until } from '../support/exec-log';
import { type FakeLlmServer, type RecordedRequest } from '../support/fake-llm-server';
import { l, n } from '../support/graphs';
import { attemptsOf } from '../support/node-attempts';
import { startWorker } from '../support/worker';

const MODEL = { model: 'openai/gpt-4o', max_tokens: 200, temperature: 0.2 };

/** A PythonFuncNode tool (slow for `slowNote`): Temporal records each of its executions. */
function noteTool(agentId: string, slowNote = '') {
  const code = [
    'import time',
    `if input_model.note == ${JSON.stringify(slowNote)}: time.sleep(6)`,
    'return {"saved": input_model.note}',
  ].join('\n');
  return n(
    'notes',
    'PythonFuncNode',
    { code, timeout_seconds: 60, heartbeat_timeout_seconds: 3, output_schema: { saved: 'string' } },
    { title: 'add_note', parent_id: agentId },
  );
}

function agentWorkflow(slowNote = '', llmInfo: Record<string, unknown> = MODEL) {
  return {
    nodes: [
      n('src', 'InputNode', { output_schema: { task: 'string' } }),
      n('agent', 'AgentNode', {
        llm_info: llmInfo,
        system_message: 'You keep notes.',
        user_message: '{{src.task}}',
        max_iterations: 5,
      }),
      noteTool('agent', slowNote),
      n('out', 'OutputNode', { output_map: { answer: 'agent.output' } }),
    ],
    links: [l('src', 'agent'), l('agent', 'out')],
  };
}

/** Tool results a request carries: OpenAI `tool` messages or Anthropic `tool_result` blocks. */
const toolTurns = (req: RecordedRequest) =>
  (req.body.messages as { role: string; content: unknown }[]).reduce(
    (count, m) =>
      count +
      (m.role === 'tool'
        ? 1
        : Array.isArray(m.content)
          ? m.content.filter((b: { type?: string }) => b?.type === 'tool_result').length
          : 0),
    0,
  );

/** Model script: note "first", then note "second", then answer; by the tool results already sent. */
function agentScript(req: RecordedRequest) {
  const done = toolTurns(req);
  if (done === 0) return { toolCalls: [{ id: 'call_1', name: 'add_note', arguments: { note: 'first' } }] };
  if (done === 1) return { toolCalls: [{ id: 'call_2', name: 'add_note', arguments: { note: 'second' } }] };
  return { content: JSON.stringify({ output: 'two notes saved' }) };
}

describe('e2e: agents act through durable tool calls; best-of-n picks the best sample', function () {
  this.timeout(180_000);
  // A worker process of its own: one test kills it mid-loop.
  let engine: SplitEngine;
  let fake: FakeLlmServer;

  before(async () => {
    engine = await startSplitEngine();
    fake = await attachFakeLlm(engine);
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    fake.respondWith(undefined);
  });

  /** The tool's executions in a run, as Temporal recorded them: [state, attempt] in call order. */
  const toolRuns = async (runId: string) =>
    (await attemptsOf(engine.api).ofNode(runId, 'notes')).map((a) => [a.state, a.attempt]);

  async function createWorkflow(definition: unknown) {
    const wf = await engine.http.post('/wf/', { name: `agent-${Math.random()}`, definition });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    return wf.body.id as string;
  }

  it('BestOfN: samples in parallel, one rating call per sample, the highest-rated sample wins', async () => {
    let sampled = 0;
    fake.respondWith((req) => {
      const system = String((req.body.messages as { role: string; content: string }[])[0]?.content);
      if (system.startsWith('Rate')) {
        const user = (req.body.messages as { role: string; content: string }[]).at(-1)?.content ?? '';
        return { content: JSON.stringify({ rating: user.includes('candidate 2') ? 9 : 4 }) };
      }
      sampled++;
      return { content: JSON.stringify({ response: `candidate ${sampled}` }) };
    });
    const id = await createWorkflow({
      nodes: [
        n('src', 'InputNode', { output_schema: { q: 'string' } }),
        n('best', 'BestOfNNode', { llm_info: MODEL, user_message: '{{src.q}}', samples: 3 }),
        n('out', 'OutputNode', { output_map: { answer: 'best.response' } }),
      ],
      links: [l('src', 'best'), l('best', 'out')],
    });
    const res = await engine.http.post(`/wf/${id}/run/`, { initial_inputs: { src: { q: 'Name a colour' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.best, { response: 'candidate 2' });
    assert.deepEqual(res.body.out, { answer: 'candidate 2' });
    const rates = fake.requests.filter((r) => String(r.body.messages[0].content).startsWith('Rate'));
    assert.equal(fake.requests.length, 6, 'three samples and three ratings');
    assert.equal(rates.length, 3);
    const sample = fake.requests.find((r) => !rates.includes(r));
    assert.deepEqual(
      Object.keys(sample!.body.response_format.json_schema.schema.properties),
      ['response'],
      "samples follow the BestOfN node's output schema",
    );
    assert.deepEqual(rates.map((r) => JSON.parse(r.body.messages.at(-1).content).response.response).sort(), [
      'candidate 1',
      'candidate 2',
      'candidate 3',
    ]);
    const [run] = (await engine.http.get(`/wf/${id}/runs/`)).body;
    const task = run.tasks.find((t: { node_id: string }) => t.node_id === 'best');
    assert.deepEqual(task.subworkflow_output.ratings.length, 3);
    const sixCalls = Array.from({ length: 6 }, () => ({ input: 10, output: 10 }));
    assert.deepEqual(
      task.usage,
      {
        prompt_tokens: 60,
        completion_tokens: 60,
        total_tokens: 120,
        cost_usd: costAtPublishedPrice(MODEL.model, sixCalls),
        cost_note: null,
        by_model: [
          {
            model: MODEL.model,
            prompt_tokens: 60,
            completion_tokens: 60,
            calls: 6,
            cost_usd: costAtPublishedPrice(MODEL.model, sixCalls),
          },
        ],
      },
      'six calls of 10 + 10 tokens',
    );
    assert.deepEqual(run.usage, task.usage);
  });

  it('Agent: offers its child nodes as tools, answers each tool call with its id, then returns the final answer', async () => {
    fake.respondWith(agentScript);
    const id = await createWorkflow(agentWorkflow());
    const res = await engine.http.post(`/wf/${id}/run/`, { initial_inputs: { src: { task: 'Save two notes' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.out.answer, 'two notes saved');
    assert.equal(res.body.agent.tool_calls.length, 4, 'two assistant turns and two tool turns');
    assert.equal(fake.requests.length, 3);

    const [first, second, third] = fake.requests;
    assert.equal(first!.body.tool_choice, 'auto');
    assert.equal(first!.body.tools.length, 1);
    const tool = first!.body.tools[0];
    assert.equal(tool.type, 'function');
    assert.equal(tool.function.name, 'add_note');
    assert.match(tool.function.description, /Python function/, 'described by its node type');
    assert.deepEqual(
      tool.function.parameters,
      { type: 'object', properties: {}, additionalProperties: true },
      'parameters are its input (any fields), never its config (code, timeouts)',
    );
    assert.equal(first!.body.response_format.type, 'json_schema');
    const sent = second!.body.messages.slice(-2);
    assert.equal(sent[0].role, 'assistant');
    assert.equal(sent[0].tool_calls[0].id, 'call_1');
    assert.deepEqual(sent[1], { role: 'tool', tool_call_id: 'call_1', content: '{"saved":"first"}' });
    assert.equal(third!.body.messages.at(-1).tool_call_id, 'call_2');

    const [run] = (await engine.http.get(`/wf/${id}/runs/`)).body;
    assert.deepEqual(
      await toolRuns(run.id),
      [
        ['completed', 1],
        ['completed', 1],
      ],
      'the tool ran once per call',
    );
    const threeCalls = Array.from({ length: 3 }, () => ({ input: 10, output: 10 }));
    const used = {
      prompt_tokens: 30,
      completion_tokens: 30,
      total_tokens: 60,
      cost_usd: costAtPublishedPrice(MODEL.model, threeCalls),
      cost_note: null,
      by_model: [
        {
          model: MODEL.model,
          prompt_tokens: 30,
          completion_tokens: 30,
          calls: 3,
          cost_usd: costAtPublishedPrice(MODEL.model, threeCalls),
        },
      ],
    };
    assert.deepEqual(run.tasks.find((t: { node_id: string }) => t.node_id === 'agent').usage, used);
    assert.equal(run.tasks.find((t: { node_id: string }) => t.node_id === 'src').usage, null);
    assert.deepEqual(run.usage, used);
    const openapi = (await engine.http.get('/openapi.json')).body;
    assert.ok(openapi.components.schemas.RunUsage, 'usage is a documented field');
    assert.ok(openapi.components.schemas.RunResponse.properties.usage);
  });

  it('Agent on Anthropic: tools with input_schema, each tool_use answered by a tool_result with its id', async () => {
    fake.respondWith(agentScript);
    const id = await createWorkflow(agentWorkflow('', { ...MODEL, model: 'anthropic/claude-3-5-haiku-latest' }));
    const res = await engine.http.post(`/wf/${id}/run/`, { initial_inputs: { src: { task: 'Save two notes' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.out.answer, 'two notes saved');
    assert.equal(fake.requests.length, 3);
    const [first, second] = fake.requests;
    assert.equal(first!.path, '/v1/messages');
    assert.deepEqual(first!.body.tool_choice, { type: 'auto' });
    assert.equal(first!.body.tools[0].name, 'add_note');
    assert.equal(first!.body.tools[0].input_schema.type, 'object');
    const [assistant, results] = second!.body.messages.slice(-2);
    assert.deepEqual(assistant.content, [
      { type: 'tool_use', id: 'call_1', name: 'add_note', input: { note: 'first' } },
    ]);
    assert.deepEqual(results, {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '{"saved":"first"}' }],
    });
  });

  it('Agent: a worker killed (kill -9) mid-loop resumes without repeating completed model or tool calls', async () => {
    fake.respondWith(agentScript);
    const id = await createWorkflow(agentWorkflow('second'));
    const started = await engine.http.post(`/wf/${id}/start_run/`, {
      initial_inputs: { src: { task: 'Save two notes' } },
    });
    assert.equal(started.status, 200);
    const victim = engine.worker.process.pid;
    await until('the second tool call running', async () => {
      const calls = await attemptsOf(engine.api).ofNode(started.body.id, 'notes');
      return calls.length === 2 && calls[1]?.state === 'running' && calls[1].workerPid === victim;
    });
    engine.worker.process.kill('SIGKILL');
    await engine.worker.process.exited;
    engine.worker = await startWorker(engine.api.env);
    const run = await waitForRun(engine.http, started.body.id, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', run.message);
    assert.equal(fake.requests.length, 3, 'each model call was made once');
    const calls = await toolRuns(started.body.id);
    assert.deepEqual(calls[0], ['completed', 1], `the completed tool call did not run again: ${JSON.stringify(calls)}`);
    assert.equal(calls.length, 2, 'no tool call was scheduled anew');
    assert.ok(
      calls[1]?.[0] === 'completed' && Number(calls[1]?.[1]) >= 2,
      `the interrupted call ran again: ${JSON.stringify(calls)}`,
    );
    assert.equal(run.tasks.find((t: { node_id: string }) => t.node_id === 'agent').outputs.output, 'two notes saved');
  });

  it('Agent: a HumanInterventionNode tool pauses the run until a human acts; the answer goes back to the model', async () => {
    fake.respondWith((req) =>
      toolTurns(req) === 0
        ? { toolCalls: [{ id: 'call_h', name: 'ask_human', arguments: { question: 'Ship it?' } }] }
        : { content: JSON.stringify({ output: 'shipped' }) },
    );
    const id = await createWorkflow({
      nodes: [
        n('src', 'InputNode', { output_schema: { task: 'string' } }),
        n('agent', 'AgentNode', { llm_info: MODEL, user_message: '{{src.task}}' }),
        n('human', 'HumanInterventionNode', { message: 'The agent asks' }, { title: 'ask_human', parent_id: 'agent' }),
      ],
      links: [l('src', 'agent')],
    });
    const started = await engine.http.post(`/wf/${id}/start_run/`, {
      initial_inputs: { src: { task: 'Ship the release' } },
    });
    const paused = await waitForRun(engine.http, started.body.id, (r) => r.status === 'PAUSED', 60_000);
    assert.equal(paused.status, 'PAUSED');
    assert.equal(fake.requests.length, 1);
    const inbox = (await engine.http.get('/wf/paused_workflows/')).body as { run: { id: string } }[];
    assert.ok(
      inbox.some((p) => p.run.id === started.body.id),
      JSON.stringify(inbox),
    );
    const action = await engine.http.post(`/wf/process_pause_action/${started.body.id}/`, {
      inputs: { answer: 'yes' },
      user_id: 'lead',
      action: 'APPROVE',
      comments: null,
    });
    assert.equal(action.status, 200, JSON.stringify(action.body));
    const run = await waitForRun(engine.http, started.body.id, undefined, 60_000);
    assert.equal(run.status, 'COMPLETED', run.message);
    assert.equal(run.tasks.find((t: { node_id: string }) => t.node_id === 'agent').outputs.output, 'shipped');
    const toolMessage = fake.requests[1]!.body.messages.at(-1);
    assert.equal(toolMessage.tool_call_id, 'call_h');
    assert.deepEqual(JSON.parse(toolMessage.content), { answer: 'yes', question: 'Ship it?' });
  });
});
