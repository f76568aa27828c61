import assert from 'node:assert/strict';
import { type SplitEngine, startSplitEngine, waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import type { FakeLlmServer, RecordedRequest } from '../support/fake-llm-server';
import { type FakeMcpServer, startFakeMcpServer } from '../support/fake-mcp-server';
import { type Cfg, l, n } from '../support/graphs';
import { attachFakeLlm } from '../support/llm-engine';
import { startWorker } from '../support/worker';

const MODEL = { model: 'openai/gpt-4o', max_tokens: 200, temperature: 0.2 };

/** The tool messages a model request carries (OpenAI `tool` turns), their content parsed. */
const toolResults = (req: RecordedRequest) =>
  (req.body.messages as { role: string; content: string }[])
    .filter((m) => m.role === 'tool')
    .map((m) => JSON.parse(m.content) as Record<string, unknown>);

/** in → agent (its one tool: the MCP server, every tool it lists) → out. */
function agentWorkflow(mcpUrl: string, tool: Cfg = {}) {
  return {
    nodes: [
      n('in', 'InputNode', { output_schema: { task: 'string' } }),
      n('agent', 'AgentNode', {
        llm_info: MODEL,
        system_message: 'You use tools.',
        user_message: '{{in.task}}',
        max_iterations: 5,
        heartbeat_timeout_seconds: 3,
      }),
      n(
        'server',
        'MCPToolNode',
        { server_url: `${mcpUrl}/mcp`, heartbeat_timeout_seconds: 2, max_retries: 3, ...tool },
        { title: 'tools', parent_id: 'agent' },
      ),
      n('out', 'OutputNode', { output_map: { answer: 'agent.output' } }),
    ],
    links: [l('in', 'agent'), l('agent', 'out')],
  };
}

describe('e2e: an agent uses the tools of an MCP server, each call a durable activity', function () {
  this.timeout(180_000);
  // A worker process of its own: the durability tests kill it.
  let engine: SplitEngine;
  let llm: FakeLlmServer;
  let mcp: FakeMcpServer;
  /** tools/list requests the server had answered when the test began. */
  let listedBefore = 0;

  before(async () => {
    engine = await startSplitEngine();
    llm = await attachFakeLlm(engine);
    mcp = await startFakeMcpServer();
  });
  after(async () => {
    await engine?.close();
    await Promise.all([llm?.close(), mcp?.close()]);
  });
  beforeEach(() => {
    llm.requests.length = 0;
    llm.respondWith(undefined);
    mcp.calls.length = 0;
    listedBefore = mcp.listings;
  });

  async function start(definition: unknown) {
    const wf = await engine.http.post('/wf/', { name: `mcp-agent-${Math.random()}`, definition });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    const started = await engine.http.post(`/wf/${wf.body.id}/start_run/`, {
      initial_inputs: { in: { task: 'Add and look up' } },
    });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    return started.body.id as string;
  }

  /** Kills the worker process and starts another on the same task queue. */
  async function replaceWorker() {
    engine.worker.process.kill('SIGKILL');
    await engine.worker.process.exited;
    engine.worker = await startWorker(engine.api.env);
  }

  it("the model sees the server's tools with their own schemas; two calls get their real results; a worker killed before the next model call repeats neither; each worker lists the server once", async () => {
    llm.respondWith((req) => {
      const done = toolResults(req).length;
      if (done === 0)
        return {
          toolCalls: [
            { id: 'c1', name: 'add', arguments: { a: 2, b: 3 } },
            { id: 'c2', name: 'lookup', arguments: { key: 'durable' } },
          ],
        };
      // The second model call is slow: the worker is killed while it is in flight.
      return { content: JSON.stringify({ output: 'sum 5; durable defined' }), delayMs: 4000 };
    });
    const runId = await start(agentWorkflow(mcp.url));
    await until('the second model call in flight', async () => llm.requests.length >= 2);
    await replaceWorker();
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', run.message);

    const offered = (llm.requests[0]?.body.tools as { function: { name: string; parameters: Cfg } }[]).map(
      (t) => t.function,
    );
    assert.deepEqual(
      offered.map((t) => t.name),
      ['add', 'lookup', 'fail', 'picture', 'slow'],
    );
    const add = offered.find((t) => t.name === 'add');
    assert.deepEqual(Object.keys(add?.parameters.properties as Cfg), ['a', 'b']);
    assert.deepEqual(add?.parameters.required, ['a', 'b']);

    const results = toolResults(llm.requests.at(-1) as RecordedRequest);
    assert.deepEqual(
      results.map((r) => r.json ?? r.text),
      [{ sum: 5 }, 'definition of durable'],
    );
    // The two calls ran in parallel: in either order, each reached the server once.
    assert.deepEqual(
      mcp.calls.map((c) => [c.tool, c.arguments]).sort(([a], [b]) => String(a).localeCompare(String(b))),
      [
        ['add', { a: 2, b: 3 }],
        ['lookup', { key: 'durable' }],
      ],
    );
    const agent = run.tasks.find((t: { node_id: string }) => t.node_id === 'agent');
    assert.equal(agent.outputs.output, 'sum 5; durable defined');
    // The first worker listed once for its model call and both tool calls; its list died with it,
    // so the worker that made the second model call listed once more.
    assert.equal(mcp.listings - listedBefore, 2, 'one tools/list per worker process');
  });

  it('a call in flight when its worker dies is sent once more, with the same spur/call_id (the bound on duplicates)', async () => {
    llm.respondWith((req) =>
      toolResults(req).length === 0
        ? { toolCalls: [{ id: 'c1', name: 'slow', arguments: { id: 'k1' } }] }
        : { content: JSON.stringify({ output: 'slow done' }) },
    );
    const runId = await start(agentWorkflow(mcp.url));
    await mcp.arrived('k1');
    await replaceWorker();
    // The server finishes the call nobody is waiting for any more.
    mcp.release('k1');
    const run = await waitForRun(engine.http, runId, undefined, 120_000);
    assert.equal(run.status, 'COMPLETED', run.message);
    const slow = mcp.calls.filter((c) => c.tool === 'slow');
    assert.equal(slow.length, 2, 'the interrupted call, then its retry');
    const [first, retry] = slow.map((c) => c.meta?.['spur/call_id']);
    assert.ok(typeof first === 'string' && first.length > 0);
    assert.equal(retry, first, 'the retry says it is the same call');
  });

  it("a failing MCP tool fails the agent with the server's message", async () => {
    llm.respondWith(() => ({ toolCalls: [{ id: 'c1', name: 'fail', arguments: {} }] }));
    const runId = await start(agentWorkflow(mcp.url));
    const run = await waitForRun(engine.http, runId, undefined, 60_000);
    assert.equal(run.status, 'FAILED');
    const agent = run.tasks.find((t: { node_id: string }) => t.node_id === 'agent');
    assert.match(
      agent.error,
      /Tool 'fail' failed: .*MCP tool 'fail' failed: the lookup service is down for maintenance/,
    );
    assert.equal(mcp.calls.length, 1);
  });

  it('a node with `tool` set offers that one tool under its title; the run lists the server once', async () => {
    llm.respondWith((req) =>
      toolResults(req).length === 0
        ? { toolCalls: [{ id: 'c1', name: 'tools', arguments: { a: 1, b: 1 } }] }
        : { content: JSON.stringify({ output: 'two' }) },
    );
    const runId = await start(agentWorkflow(mcp.url, { tool: 'add' }));
    const run = await waitForRun(engine.http, runId, undefined, 60_000);
    assert.equal(run.status, 'COMPLETED', run.message);
    const offered = (llm.requests[0]?.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
    assert.deepEqual(offered, ['tools']);
    assert.deepEqual(
      mcp.calls.map((c) => [c.tool, c.arguments]),
      [['add', { a: 1, b: 1 }]],
    );
    assert.equal(mcp.listings - listedBefore, 1, 'two model calls and a tool call, one tools/list');
  });
});
