import assert from 'node:assert/strict';
import { type Listener, listen } from '../support/counting-listener';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { type FakeLlmServer, type RecordedRequest, startFakeLlmServer } from '../support/fake-llm-server';
import { type FakeMcpServer, startFakeMcpServer } from '../support/fake-mcp-server';
import { type Cfg, l, n } from '../support/graphs';
import { fakeProviderSettings } from '../support/llm-engine';
import { setEnv } from '../support/integration-runs';

// MCP servers are reached through the outbound client: with SPUR_OUTBOUND_ALLOW_PRIVATE=false (the
// production default) loopback stands for any internal service. The fake MCP server and the fake
// model are the operator's trusted hosts (SPUR_OUTBOUND_ALLOW_HOSTS); the internal listener counts
// connections, so "refused" means nothing arrived. A model's tool call is hostile input.

const POLICY = /stopped by the outbound policy: 127\.0\.0\.1 is a loopback address/;
const TOKEN = 'mcp-stored-credential-7731';

const hostPort = (url: string) => new URL(url).host;

const toolTurns = (req: RecordedRequest) =>
  (req.body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool');

describe('security: MCP servers go through the outbound policy, and a model fills arguments, never the server', function () {
  this.timeout(120_000);
  let engine: Engine;
  let internal: Listener;
  let mcp: FakeMcpServer;
  let llm: FakeLlmServer;

  before(async () => {
    internal = await listen((_req, res) => res.end('{"secret": "internal answer"}'));
    mcp = await startFakeMcpServer();
    llm = await startFakeLlmServer();
    engine = await startEngine({
      SPUR_OUTBOUND_ALLOW_PRIVATE: 'false',
      SPUR_OUTBOUND_ALLOW_HOSTS: `${hostPort(mcp.url)},${hostPort(llm.url)}`,
    });
    await setEnv(engine, { ...fakeProviderSettings(llm), MCP_API_BASE: mcp.url, MCP_API_KEY: TOKEN });
  });
  after(async () => {
    await engine?.close();
    await Promise.all([internal?.close(), mcp?.close(), llm?.close()]);
  });
  beforeEach(() => {
    internal.connections = 0;
    mcp.calls.length = 0;
    llm.requests.length = 0;
  });

  async function runWorkflow(definition: unknown) {
    const wf = await engine.http.post('/wf/', { name: `mcp-sec-${Math.random()}`, definition });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    const started = await engine.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'go' } } });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    return waitForRun(engine.http, started.body.id, undefined, 60_000);
  }

  const single = (config: Cfg) => ({
    nodes: [n('in', 'InputNode', { output_schema: { x: 'string' } }), n('node', 'MCPToolNode', config)],
    links: [l('in', 'node')],
  });

  /** in → agent, whose one tool source is an MCPToolNode titled `tools` with `server`. */
  const agentOf = (server: Cfg) => ({
    nodes: [
      n('in', 'InputNode', { output_schema: { x: 'string' } }),
      n('agent', 'AgentNode', {
        llm_info: { model: 'openai/gpt-4o', max_tokens: 100, temperature: 0 },
        user_message: '{{in.x}}',
        max_iterations: 3,
      }),
      n('server', 'MCPToolNode', server, { title: 'tools', parent_id: 'agent' }),
    ],
    links: [l('in', 'agent')],
  });

  for (const transport of ['streamable-http', 'sse'])
    it(`a server_url the policy refuses gets no connection (${transport}); the node fails naming the setting, not retried`, async () => {
      const run = await runWorkflow(
        single({ server_url: `${internal.url}/mcp`, transport, tool: 'add', max_retries: 3 }),
      );
      const task = run.tasks.find((t: { node_id: string }) => t.node_id === 'node');
      assert.equal(task.status, 'FAILED');
      assert.match(task.error, POLICY);
      assert.match(task.error, /SPUR_OUTBOUND_ALLOW_PRIVATE/);
      assert.equal(internal.connections, 0, 'the internal listener received nothing');
    });

  it('an agent whose MCP server the policy refuses fails naming the setting: no connection, and the model is never asked', async () => {
    const run = await runWorkflow(agentOf({ server_url: `${internal.url}/mcp` }));
    assert.equal(run.status, 'FAILED');
    const agent = run.tasks.find((t: { node_id: string }) => t.node_id === 'agent');
    assert.match(agent.error, POLICY);
    assert.match(agent.error, /SPUR_OUTBOUND_ALLOW_PRIVATE/);
    assert.equal(internal.connections, 0, 'the internal listener received nothing');
    assert.equal(llm.requests.length, 0, 'no model request: its tools could not be offered');
  });

  it("a tool call's arguments never change the server, its transport, its headers or its credential", async () => {
    const hostile = {
      a: 1,
      b: 2,
      server_url: `${internal.url}/mcp`,
      transport: 'sse',
      tool: 'fail',
      headers: { Authorization: { variable: 'MCP_API_KEY', prefix: 'Bearer ' } },
      timeout_seconds: 1,
    };
    llm.respondWith((req) =>
      toolTurns(req).length === 0
        ? {
            toolCalls: [
              { id: 'c1', name: 'add', arguments: hostile },
              // The node's title is no tool: its tools are reached by their own names only.
              { id: 'c2', name: 'tools', arguments: { tool: 'fail' } },
            ],
          }
        : { content: JSON.stringify({ output: 'done' }) },
    );
    const run = await runWorkflow(
      agentOf({
        server_url: `${mcp.url}/mcp`,
        headers: { Authorization: { variable: 'MCP_API_KEY', prefix: 'Bearer ' } },
      }),
    );
    assert.equal(run.status, 'COMPLETED', run.message);
    assert.equal(internal.connections, 0, 'the internal listener received nothing');
    assert.deepEqual(
      mcp.calls.map((c) => [c.tool, c.arguments, c.transport, c.authorization]),
      [['add', { a: 1, b: 2 }, 'streamable-http', `Bearer ${TOKEN}`]],
      'the configured tool of the configured server, with its own credential, and only the arguments it declares',
    );
    const replies = toolTurns(llm.requests.at(-1) as RecordedRequest).map((m) => m.content);
    assert.match(String(replies[0]), /"sum":3/);
    assert.equal(replies[1], "Error: there is no tool named 'tools'");
    // The stored credential is in no output, task, event or model request.
    const events = await engine.http.get(`/run/${run.id}/events/`);
    for (const text of [JSON.stringify(run), events.text, JSON.stringify(llm.requests.map((r) => r.body))])
      assert.ok(!text.includes(TOKEN), 'the credential appears nowhere');
  });
});
