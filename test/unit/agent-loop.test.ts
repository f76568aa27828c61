import assert from 'node:assert/strict';
import { runAgent, toolName } from '../../src/engine/agent-loop';
import { runBestOfN } from '../../src/engine/best-of-n';
import type { StepRunner } from '../../src/engine/composite';
import { planGraph } from '../../src/engine/graph';
import type { AgentStepInput, AgentStepResult, GraphNode } from '../../src/engine/run-contract';

const node = (
  id: string,
  nodeType: string,
  config: Record<string, unknown> = {},
  parent: string | null = null,
  title = id,
): GraphNode => ({ id, title, parent_id: parent, node_type: nodeType, config });

/** A step runner over scripted model turns; tools echo their config and input. */
function scripted(turns: AgentStepResult[]) {
  const steps: AgentStepInput[] = [];
  const executed: GraphNode[] = [];
  const runner: StepRunner = {
    runId: 'R1',
    execute: async (n, input) => {
      executed.push(n);
      if (n.config.fail) throw new Error('tool broke');
      return {
        output: { config: n.config, input },
        startTime: 'now',
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      };
    },
    agentStep: async (input) => {
      steps.push(JSON.parse(JSON.stringify(input)) as AgentStepInput);
      const next = turns.shift();
      if (!next) throw new Error('no more turns scripted');
      return next;
    },
    isCancellation: () => false,
    failureMessage: (err) => (err as Error).message,
  };
  return { runner, steps, executed };
}

const agentGraph = (toolConfig: Record<string, unknown> = { keep: 'stored', over: 'stored' }) =>
  planGraph({
    nodes: [node('a', 'AgentNode', { max_iterations: 3 }), node('t1', 'PythonFuncNode', toolConfig, 'a', 'Look Up')],
    links: [],
  });

const call = (id: string, name: string, args: unknown) => ({
  id,
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});

describe('agent loop (engine)', () => {
  it('names tools safely for function-calling APIs', () => {
    assert.equal(toolName('Look Up'), 'Look_Up');
    assert.equal(toolName('a.b/c'), 'a_b_c');
    assert.equal(toolName('x'.repeat(80)).length, 64);
  });

  it('hands the arguments over as input, sets only the declared settable fields, and keeps every turn in order', async () => {
    const level = agentGraph();
    const fields = { t1: { settable: ['over'], config: ['keep', 'over', 'code'] } };
    const { runner, steps, executed } = scripted([
      {
        kind: 'tool_calls',
        content: '',
        toolCalls: [call('c1', 'look_up', { over: 'model', q: 1 }), call('c2', 'Look Up', {})],
        toolFields: fields,
        usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
      },
      { kind: 'answer', output: { output: 'ok' } },
    ]);
    const result = await runAgent(runner, level, level.byId.get('a') as GraphNode, { src: 1 });
    assert.deepEqual(result.state, { status: 'COMPLETED', output: { output: 'ok' } });
    assert.deepEqual(executed[0]!.config, { keep: 'stored', over: 'model' });
    assert.deepEqual(
      executed[1]!.config,
      { keep: 'stored', over: 'stored' },
      'a field left out keeps its stored value',
    );
    assert.equal(executed.length, 2);
    const second = steps[1]!.transcript;
    assert.deepEqual(
      second.map((t) => (t.role === 'tool' ? `tool ${t.toolCallId}` : 'assistant')),
      ['assistant', 'tool c1', 'tool c2'],
    );
    assert.deepEqual((second[1] as { content: Record<string, unknown> }).content.input, { q: 1 });
    assert.deepEqual(result.usage, { prompt_tokens: 7, completion_tokens: 7, total_tokens: 14 });
    assert.equal(result.history.look_up!.length, 1);
  });

  it('refuses a call that names a config field its node type does not let the model set, without running it or showing the stored config', async () => {
    const level = agentGraph({ code: 'stored code', timeout_seconds: 30 });
    const fields = { t1: { settable: [], config: ['code', 'timeout_seconds', 'memory_limit_mb'] } };
    const { runner, steps, executed } = scripted([
      {
        kind: 'tool_calls',
        content: '',
        toolCalls: [
          call('c1', 'look_up', { q: 1, code: 'evil' }),
          call('c2', 'look_up', { q: 1, timeout_seconds: 3600, memory_limit_mb: 8192 }),
        ],
        toolFields: fields,
      },
      { kind: 'answer', output: { output: 'ok' } },
    ]);
    const result = await runAgent(runner, level, level.byId.get('a') as GraphNode, {});
    assert.equal(result.state.status, 'COMPLETED');
    assert.equal(executed.length, 0);
    const [first, second] = steps[1]!.transcript.slice(1).map((t) => (t as { content: string }).content);
    assert.equal(
      first,
      "Error: field 'code' cannot be set by the model; call the tool again with its input and the settable fields its schema lists",
    );
    assert.match(second!, /^Error: fields 'timeout_seconds', 'memory_limit_mb' cannot be set by the model/);
    assert.doesNotMatch(`${first} ${second}`, /stored code|30/);
  });

  it('a tool whose node type declares no fields lets the model set nothing: arguments are input, run-policy fields are refused', async () => {
    const level = agentGraph({ code: 'stored code' });
    const { runner, steps, executed } = scripted([
      {
        kind: 'tool_calls',
        content: '',
        toolCalls: [
          call('c1', 'look_up', '{"code": "evil", "__proto__": {"polluted": true}}'),
          call('c2', 'look_up', { max_retries: 50 }),
        ],
        toolFields: { t1: { settable: [], config: [] } },
      },
      { kind: 'answer', output: { output: 'ok' } },
    ]);
    await runAgent(runner, level, level.byId.get('a') as GraphNode, {});
    assert.equal(executed.length, 1);
    assert.deepEqual(executed[0]!.config, { code: 'stored code' });
    const input = (steps[1]!.transcript[1] as { content: Record<string, any> }).content.input;
    assert.equal(input.code, 'evil');
    assert.ok(
      Object.hasOwn(input, '__proto__') && Object.getPrototypeOf(input) === Object.prototype,
      'an argument named __proto__ stays a field',
    );
    assert.match((steps[1]!.transcript[2] as { content: string }).content, /field 'max_retries' cannot be set/);
  });

  it('a HumanInterventionNode tool pauses with its stored config: the model cannot set its timeout or action', async () => {
    const level = planGraph({
      nodes: [
        node('a', 'AgentNode'),
        node('h', 'HumanInterventionNode', { message: 'Approve refunds under $100 only' }, 'a', 'ask'),
      ],
      links: [],
    });
    const paused: { config: Record<string, unknown>; input: Record<string, unknown> }[] = [];
    const fields = { h: { settable: [], config: ['message', 'timeout_seconds', 'timeout_action'] } };
    const { runner, steps } = scripted([
      {
        kind: 'tool_calls',
        content: '',
        toolCalls: [call('c1', 'ask', { question: 'ok?', timeout_seconds: 1, timeout_action: 'APPROVE' })],
        toolFields: fields,
      },
      { kind: 'tool_calls', content: '', toolCalls: [call('c2', 'ask', { question: 'ok?' })], toolFields: fields },
      { kind: 'answer', output: { output: 'done' } },
    ]);
    runner.pause = async (n, input) => {
      paused.push({ config: n.config, input });
      return { status: 'COMPLETED', output: { ...input, answer: 'no' } };
    };
    await runAgent(runner, level, level.byId.get('a') as GraphNode, {});
    assert.deepEqual(paused, [{ config: { message: 'Approve refunds under $100 only' }, input: { question: 'ok?' } }]);
    assert.match(
      (steps[1]!.transcript[1] as { content: string }).content,
      /fields 'timeout_seconds', 'timeout_action' cannot be set/,
    );
  });

  it('tells the model about unknown tools and malformed arguments instead of failing', async () => {
    const level = agentGraph();
    const { runner, steps, executed } = scripted([
      {
        kind: 'tool_calls',
        content: '',
        toolCalls: [call('c1', 'nope', {}), call('c2', 'look_up', '{not json'), call('c3', 'look_up', '[1]')],
        toolFields: {},
      },
      { kind: 'answer', output: { output: 'sorry' } },
    ]);
    const result = await runAgent(runner, level, level.byId.get('a') as GraphNode, {});
    assert.equal(result.state.status, 'COMPLETED');
    assert.equal(executed.length, 0);
    const contents = steps[1]!.transcript.slice(1).map((t) => (t as { content: string }).content);
    assert.match(contents[0]!, /no tool named 'nope'/);
    assert.match(contents[1]!, /not valid JSON/);
    assert.match(contents[2]!, /not a JSON object/);
  });

  it('fails when a tool fails, and after max_iterations model calls without an answer', async () => {
    const broken = agentGraph({ fail: true });
    const failing = await runAgent(
      scripted([{ kind: 'tool_calls', content: '', toolCalls: [call('c1', 'look_up', {})], toolFields: {} }]).runner,
      broken,
      broken.byId.get('a') as GraphNode,
      {},
    );
    assert.deepEqual(failing.state, { status: 'FAILED', error: "Tool 'look_up' failed: tool broke" });
    const level = agentGraph();
    const loop = Array.from({ length: 3 }, (_, i): AgentStepResult => ({
      kind: 'tool_calls',
      content: '',
      toolCalls: [call(`c${i}`, 'look_up', {})],
      toolFields: {},
    }));
    const endless = await runAgent(scripted(loop).runner, level, level.byId.get('a') as GraphNode, {});
    assert.equal(endless.state.status, 'FAILED');
    assert.match((endless.state as { error: string }).error, /3 model calls \(max_iterations\)/);
  });
});

describe('best of n (engine)', () => {
  it('rates every sample once and keeps the first of the best', async () => {
    const executed: GraphNode[] = [];
    const ratings = [3, 8, 8];
    const runner: StepRunner = {
      runId: 'R1',
      execute: async (n, input) => {
        executed.push(n);
        if (n.id.includes('.sample_')) return { output: { response: n.id }, startTime: 'now' };
        const sample = Number(/sample_(\d+)/.exec(JSON.stringify(input))![1]);
        return { output: { rating: ratings[sample - 1] }, startTime: 'now' };
      },
      agentStep: async () => assert.fail('no agent here'),
      isCancellation: () => false,
      failureMessage: (err) => String(err),
    };
    const result = await runBestOfN(
      runner,
      node('b', 'BestOfNNode', { samples: 3, llm_info: { model: 'openai/gpt-4o' } }),
      { q: 1 },
    );
    assert.deepEqual(result.state, { status: 'COMPLETED', output: { response: 'b.sample_2' } });
    assert.equal(executed.filter((n) => n.node_type === 'BestOfNNode').length, 3);
    const rater = executed.find((n) => n.node_type === 'SingleLLMCallNode')!;
    assert.match(String(rater.config.system_message), /^Rate the following response/);
    assert.equal(rater.config.user_message, '');
  });
});
