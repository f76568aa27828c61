import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, LATEST_PROTOCOL_VERSION, type McpError, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { hashApiKey } from '../../src/http/api-keys';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { l, n } from '../support/graphs';
import { client } from '../support/http';

const KEY = 'spur_mcp-test-key-0123456789';
const WITH_KEY = { authorization: `Bearer ${KEY}` };

/** form(name) → python greeting → out: what the README's tour runs. */
function greeter(code = 'return {"greeting": "Hello, " + input_model.form.name}') {
  return {
    nodes: [
      n('form', 'InputNode', { output_schema: { name: 'string' } }),
      n('greet', 'PythonFuncNode', { code, output_schema: { greeting: 'string' } }),
      n('out', 'OutputNode', { output_map: { greeting: 'greet.greeting' } }),
    ],
    links: [l('form', 'greet'), l('greet', 'out')],
  };
}

/** What a raw JSON-RPC answer of the tests holds. */
interface JsonRpcAnswer {
  result?: { protocolVersion?: string; tools?: unknown[] };
  error?: { message?: string };
}

/** greeter(), its Python node sleeping first: a run that lasts `seconds` and more. */
const slowGreeter = (seconds: number) =>
  greeter(`import time\ntime.sleep(${seconds})\nreturn {"greeting": "Hello, " + input_model.form.name}`);

/** The official SDK client, connected to Spur's MCP endpoint. */
async function connectTo(mcpUrl: URL, headers: Record<string, string>): Promise<Client> {
  const mcp = new Client({ name: 'spur-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers } }));
  return mcp;
}

/** A workflow published as the MCP tool `toolName`. */
async function publishedWorkflow(http: ReturnType<typeof client>, toolName: string, definition: unknown) {
  const wf = await http.post('/wf/', { name: `${toolName}-${Math.random().toString(36).slice(2, 8)}`, definition });
  assert.equal(wf.status, 200, JSON.stringify(wf.body));
  const put = await http.put(`/wf/${wf.body.id}/mcp/`, { enabled: true, tool_name: toolName });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  return wf.body as { id: string };
}

/** Calls a tool with a progress token, recording every progress notification it gets and when it came. */
async function callWithProgress(mcp: Client, name: string, args: Record<string, unknown>) {
  const progress: Progress[] = [];
  const receivedAt: number[] = [];
  const started = Date.now();
  const result = await mcp.callTool({ name, arguments: args }, undefined, {
    onprogress: (p) => {
      progress.push(p);
      receivedAt.push(performance.now());
    },
  });
  return { result, progress, receivedAt, ms: Date.now() - started };
}

/**
 * form(name) → four Python nodes side by side, sleeping 1, 1.15, 1.3 and 3.5 s → out: the first three
 * finish in turn, closer together than the server's reads, so a server reading more often would
 * report them closer together too. The last keeps the run open two seconds after them, so a read
 * sees them before the run ends however late the loaded host saves them (with the last at 1.45 s,
 * a CI run once saw the run end before any read after the form's).
 */
const STAGGERED = [1, 1.15, 1.3, 3.5];
function staggeredSleepers() {
  const sleepers = STAGGERED.map((seconds, i) =>
    n(`p${i}`, 'PythonFuncNode', {
      code: `import time\ntime.sleep(${seconds})\nreturn {"greeting": input_model.form.name}`,
      output_schema: { greeting: 'string' },
    }),
  );
  return {
    nodes: [
      n('form', 'InputNode', { output_schema: { name: 'string' } }),
      ...sleepers,
      n('out', 'OutputNode', { output_map: { greeting: 'p0.greeting' } }),
    ],
    links: sleepers.flatMap((p) => [l('form', p.id), l(p.id, 'out')]),
  };
}

describe("e2e: Spur's MCP server lists published workflows as tools and runs them (the official SDK client)", function () {
  this.timeout(120_000);
  let engine: Engine;
  let http: ReturnType<typeof client>;
  let mcpUrl: URL;

  before(async () => {
    // Python nodes side by side (the progress test's) run at once, not two at a time on a 2-core host.
    engine = await startEngine({ SPUR_API_KEY_HASHES: hashApiKey(KEY), SPUR_PYTHON_MAX_CONCURRENT: '6' });
    http = client(engine.api.baseUrl, WITH_KEY);
    mcpUrl = new URL(`${engine.api.baseUrl}/mcp`);
  });
  after(async () => {
    await engine?.close();
  });

  const connect = (headers: Record<string, string> = WITH_KEY) => connectTo(mcpUrl, headers);

  async function createWorkflow(name: string, definition = greeter()) {
    const wf = await http.post('/wf/', { name: `${name}-${Math.random().toString(36).slice(2, 8)}`, definition });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    return wf.body as { id: string; name: string };
  }

  const runsOf = async (workflowId: string) => (await http.get(`/wf/${workflowId}/runs/`)).body as unknown[];

  it("publishes a workflow, lists it with its input schema and its OutputNode's fields as output schema, calls it and gets its outputs; unpublished ones are not listed", async () => {
    const published = await createWorkflow('greeter');
    const hidden = await createWorkflow('hidden');
    const put = await http.put(`/wf/${published.id}/mcp/`, {
      enabled: true,
      tool_name: 'greet_someone',
      description: 'Greets a person by name',
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(put.body, {
      workflow_id: published.id,
      enabled: true,
      tool_name: 'greet_someone',
      description: 'Greets a person by name',
    });
    assert.deepEqual((await http.get(`/wf/${hidden.id}/mcp/`)).body.enabled, false);

    const mcp = await connect();
    try {
      const { tools } = await mcp.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        ['greet_someone'],
        'only the published workflow',
      );
      assert.deepEqual(tools[0]?.inputSchema, {
        type: 'object',
        properties: { name: { type: 'string' } },
        required: ['name'],
      });
      assert.deepEqual(tools[0]?.outputSchema, { type: 'object', properties: { greeting: {} } });
      assert.equal(tools[0]?.description, 'Greets a person by name');

      const result = await mcp.callTool({ name: 'greet_someone', arguments: { name: 'Ada' } });
      assert.equal(result.isError, undefined);
      assert.deepEqual(result.structuredContent, { greeting: 'Hello, Ada' });
      assert.deepEqual(JSON.parse((result.content as { text: string }[])[0]?.text ?? ''), { greeting: 'Hello, Ada' });
      const runId = String(result._meta?.['spur/run_id']);
      const run = (await http.get(`/run/${runId}/`)).body;
      assert.equal(run.status, 'COMPLETED');
      assert.equal(run.run_type, 'mcp');
      assert.equal((await runsOf(hidden.id)).length, 0);
    } finally {
      await mcp.close();
    }
  });

  it("a call that ends within the wait reports the run's finished nodes as progress: increasing, out of the workflow's node count", async () => {
    await publishedWorkflow(http, 'greet_slowly', slowGreeter(2));
    const mcp = await connect();
    try {
      const { result, progress } = await callWithProgress(mcp, 'greet_slowly', { name: 'Ada' });
      assert.deepEqual(result.structuredContent, { greeting: 'Hello, Ada' });
      assert.ok(progress.length >= 1, 'at least the InputNode finished while the Python node slept');
      progress.forEach((p, i) => {
        assert.equal(p.total, 3, 'form, greet, out');
        assert.ok(p.progress >= 1 && p.progress <= 3);
        if (i > 0) assert.ok(p.progress > (progress[i - 1]?.progress ?? 0), 'each notification reports more');
        assert.match(String(p.message), /^(form|greet|out) completed$/);
      });
      assert.equal(progress[0]?.message, 'form completed');
    } finally {
      await mcp.close();
    }
  });

  it('progress notifications, as the client receives them, report strictly more each time, one per 500 ms at most', async () => {
    await publishedWorkflow(http, 'greet_staggered', staggeredSleepers());
    const mcp = await connect();
    try {
      const { result, progress, receivedAt } = await callWithProgress(mcp, 'greet_staggered', { name: 'Ada' });
      assert.deepEqual(result.structuredContent, { greeting: 'Ada' });
      // form first, the sleepers a second or more later: at least two notifications while the call waits.
      assert.ok(progress.length >= 2, JSON.stringify(progress));
      for (let i = 1; i < progress.length; i++)
        assert.ok(progress[i]!.progress > progress[i - 1]!.progress, `strictly more: ${JSON.stringify(progress)}`);
      // The server reads the run 500 ms after its last read, so n notifications are sent over at least
      // (n - 1) × 500 ms. Their arrival can shift by delivery alone: one gap may look shorter, the
      // span from the first to the last only by the first's and last's delays (150 ms of slack).
      const span = receivedAt[receivedAt.length - 1]! - receivedAt[0]!;
      assert.ok(
        span >= (progress.length - 1) * 500 - 150,
        `${progress.length} notifications over ${span.toFixed(0)} ms: ${JSON.stringify(progress)}`,
      );
    } finally {
      await mcp.close();
    }
  });

  it('tools/list reflects publishing, renaming and withdrawing at once, without a restart', async () => {
    const wf = await createWorkflow('changing');
    const names = async () => {
      const mcp = await connect();
      try {
        return (await mcp.listTools()).tools.map((t) => t.name);
      } finally {
        await mcp.close();
      }
    };
    assert.ok(!(await names()).includes('changing_one'));
    await http.put(`/wf/${wf.id}/mcp/`, { enabled: true, tool_name: 'changing_one' });
    assert.ok((await names()).includes('changing_one'));
    await http.put(`/wf/${wf.id}/mcp/`, { enabled: true, tool_name: 'changing_two' });
    const renamed = await names();
    assert.ok(renamed.includes('changing_two') && !renamed.includes('changing_one'));
    await http.put(`/wf/${wf.id}/mcp/`, { enabled: false });
    assert.ok(!(await names()).includes('changing_two'));
    // A deleted workflow is no tool either.
    await http.put(`/wf/${wf.id}/mcp/`, { enabled: true, tool_name: 'changing_three' });
    assert.equal((await http.delete(`/wf/${wf.id}/`)).status, 204);
    assert.ok(!(await names()).includes('changing_three'));
  });

  it('a failing run is an error result in its own words; an unknown tool is a protocol error', async () => {
    const wf = await createWorkflow('failing', greeter('raise ValueError("no greeting today")'));
    await http.put(`/wf/${wf.id}/mcp/`, { enabled: true, tool_name: 'failing_tool' });
    const mcp = await connect();
    try {
      const result = await mcp.callTool({ name: 'failing_tool', arguments: { name: 'Ada' } });
      assert.equal(result.isError, true);
      assert.match((result.content as { text: string }[])[0]?.text ?? '', /no greeting today/);
      await assert.rejects(mcp.callTool({ name: 'no_such_tool', arguments: {} }), /No published workflow is the tool/);
    } finally {
      await mcp.close();
    }
  });

  it('arguments that do not fit the input schema are a JSON-RPC invalid-params error naming the field, and start no run', async () => {
    const definition = {
      nodes: [
        n('form', 'InputNode', { output_schema: { name: 'string', times: 'integer' } }),
        n('out', 'OutputNode', { output_map: { greeting: 'form.name' } }),
      ],
      links: [l('form', 'out')],
    };
    const wf = await publishedWorkflow(http, 'greet_times', definition);
    const mcp = await connect();
    try {
      const refused: [Record<string, unknown>, RegExp][] = [
        [{ times: 2 }, /name: /],
        [{ name: 'Ada', times: '2' }, /times: /],
        [{ name: 'Ada', times: 2.5 }, /times: /],
        [{ name: ['Ada'], times: 2 }, /name: /],
      ];
      for (const [args, field] of refused) {
        await assert.rejects(
          mcp.callTool({ name: 'greet_times', arguments: args }),
          (err: McpError) => {
            assert.equal(err.code, ErrorCode.InvalidParams, `${JSON.stringify(args)}: ${err.message}`);
            assert.match(err.message, /Invalid arguments for tool 'greet_times'/);
            assert.match(err.message, field);
            return true;
          },
          JSON.stringify(args),
        );
      }
      assert.equal((await runsOf(wf.id)).length, 0, 'no run started for refused arguments');
      const result = await mcp.callTool({ name: 'greet_times', arguments: { name: 'Ada', times: 2 } });
      assert.deepEqual(result.structuredContent, { greeting: 'Ada' });
      assert.equal((await runsOf(wf.id)).length, 1, 'fitting arguments run');
    } finally {
      await mcp.close();
    }
  });

  it('a tool name another workflow has is refused (409); a bad one is a 422 naming the field; an unknown workflow 404', async () => {
    const a = await createWorkflow('first');
    const b = await createWorkflow('second');
    assert.equal((await http.put(`/wf/${a.id}/mcp/`, { enabled: true, tool_name: 'taken_name' })).status, 200);
    assert.equal((await http.put(`/wf/${b.id}/mcp/`, { enabled: true, tool_name: 'taken_name' })).status, 409);
    const bad = await http.put(`/wf/${b.id}/mcp/`, { enabled: true, tool_name: 'has spaces' });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.detail[0].loc, ['body', 'tool_name']);
    assert.equal((await http.put('/wf/S999999/mcp/', { enabled: true })).status, 404);
  });

  it("negotiates the protocol version as docs/mcp.md says: the client's when supported, else the latest; an unsupported header is a 400", async () => {
    const post = async (message: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const res = await fetch(mcpUrl, {
        method: 'POST',
        headers: {
          ...WITH_KEY,
          ...headers,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...message }),
      });
      const text = await res.text();
      const data = text.split('\n').find((line) => line.startsWith('data: '));
      return { status: res.status, body: JSON.parse(data ? data.slice(6) : text) as JsonRpcAnswer };
    };
    const initialize = (protocolVersion: string) =>
      post({
        method: 'initialize',
        params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      });
    assert.equal((await initialize('2024-10-07')).body.result?.protocolVersion, '2024-10-07');
    assert.equal((await initialize('1999-01-01')).body.result?.protocolVersion, LATEST_PROTOCOL_VERSION);
    const refused = await post({ method: 'tools/list' }, { 'mcp-protocol-version': '1999-01-01' });
    assert.equal(refused.status, 400);
    assert.match(String(refused.body.error?.message), /Unsupported protocol version/);
    const headerless = await post({ method: 'tools/list' });
    assert.equal(headerless.status, 200);
    assert.ok(Array.isArray(headerless.body.result?.tools));
  });

  it('without a key (or with a wrong one) the MCP endpoint answers 401 and no run starts', async () => {
    const wf = await createWorkflow('guarded');
    await http.put(`/wf/${wf.id}/mcp/`, { enabled: true, tool_name: 'guarded_tool' });
    for (const headers of [{}, { authorization: 'Bearer wrong-key' }] as Record<string, string>[]) {
      await assert.rejects(connect(headers), /Not authenticated|Invalid API key/);
      // The same call a client would send after initialize: refused at the gate, before the SDK sees it.
      const res = await fetch(mcpUrl, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'guarded_tool', arguments: { name: 'Eve' } },
        }),
      });
      assert.equal(res.status, 401);
    }
    assert.equal((await runsOf(wf.id)).length, 0, 'no run was started');
  });
});

describe("e2e: Spur's MCP server answers a run still going at SPUR_BLOCKING_RUN_WAIT_SECONDS with its id", function () {
  this.timeout(120_000);
  const WAIT_SECONDS = 3;
  let engine: Engine;
  let mcpUrl: URL;

  before(async () => {
    engine = await startEngine({ SPUR_BLOCKING_RUN_WAIT_SECONDS: String(WAIT_SECONDS) });
    mcpUrl = new URL(`${engine.api.baseUrl}/mcp`);
  });
  after(async () => {
    await engine?.close();
  });

  it('answers {run_id, status: RUNNING} once the wait ends, with progress until then; the run completes and /run/{id}/status/ shows its outputs', async () => {
    await publishedWorkflow(engine.http, 'greet_very_slowly', slowGreeter(12));
    const mcp = await connectTo(mcpUrl, {});
    let runId: string;
    try {
      const { result, progress, ms } = await callWithProgress(mcp, 'greet_very_slowly', { name: 'Ada' });
      assert.ok(ms >= WAIT_SECONDS * 1000, `answered after the wait (${ms} ms)`);
      assert.ok(ms < 12_000, `answered before the run could end (${ms} ms)`);
      assert.equal(result.isError, undefined);
      runId = String(result._meta?.['spur/run_id']);
      assert.deepEqual(result.structuredContent, { run_id: runId, status: 'RUNNING' });
      assert.match((result.content as { text: string }[])[0]?.text ?? '', new RegExp(`/api/run/${runId}/status/`));
      assert.deepEqual(
        progress.map((p) => [p.progress, p.message]),
        [[1, 'form completed']],
        'the InputNode finished during the wait; the Python node was still asleep',
      );
    } finally {
      await mcp.close();
    }
    const status = await engine.http.get(`/run/${runId}/status/`);
    assert.equal(status.body.status, 'RUNNING', 'the run went on after the answer');
    const run = await waitForRun(engine.http, runId, undefined, 60_000);
    assert.equal(run.status, 'COMPLETED', run.message);
    assert.equal(run.run_type, 'mcp');
    const greet = run.tasks.find((t: { node_id: string }) => t.node_id === 'greet');
    assert.deepEqual(greet.outputs, { greeting: 'Hello, Ada' });
  });
});
