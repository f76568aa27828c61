import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Engine, startEngine } from '../support/engine';
import { type FakeMcpServer, PNG_1X1, startFakeMcpServer } from '../support/fake-mcp-server';
import { type Cfg, l, n } from '../support/graphs';
import { setEnv } from '../support/integration-runs';
import { attemptsOf } from '../support/node-attempts';

/** in (a, b, key: the fields the tools read) → mcp (MCPToolNode with `config`) → out. */
function toolWorkflow(config: Cfg) {
  return {
    nodes: [
      n('in', 'InputNode', { output_schema: { a: 'integer', b: 'integer', key: 'string' } }),
      n('mcp', 'MCPToolNode', config),
      n('out', 'OutputNode', { output_map: { text: 'mcp.text', json: 'mcp.json' } }),
    ],
    links: [l('in', 'mcp'), l('mcp', 'out')],
  };
}

describe('e2e: MCPToolNode calls a tool of a real MCP server through the outbound client', function () {
  this.timeout(120_000);
  let engine: Engine;
  let mcp: FakeMcpServer;

  before(async () => {
    engine = await startEngine();
    mcp = await startFakeMcpServer();
  });
  after(async () => {
    await engine?.close();
    await mcp?.close();
  });
  beforeEach(() => {
    mcp.calls.length = 0;
  });

  async function run(config: Cfg, inputs: Cfg = { a: 2, b: 3, key: 'durable' }) {
    const wf = await engine.http.post('/wf/', { name: `mcp-${Math.random()}`, definition: toolWorkflow(config) });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    const res = await engine.http.post(`/wf/${wf.body.id}/run/`, { initial_inputs: { in: inputs } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [record] = (await engine.http.get(`/wf/${wf.body.id}/runs/`)).body;
    const task = record.tasks.find((t: { node_id: string }) => t.node_id === 'mcp');
    return { outputs: res.body, record, task };
  }

  /** How many times Temporal started the run's `mcp` activity, as its history records it. */
  async function mcpAttempts(runId: string): Promise<number[]> {
    return (await attemptsOf(engine.api).ofNode(runId, 'mcp')).map((a) => a.attempt);
  }

  it('streamable HTTP: the node calls the tool with the arguments its schema declares, taken from its input, and returns text and JSON', async () => {
    const { outputs, task } = await run({ server_url: `${mcp.url}/mcp`, tool: 'add' });
    assert.equal(task.status, 'COMPLETED', JSON.stringify(task));
    assert.deepEqual(outputs.mcp.json, { sum: 5 });
    assert.equal(outputs.mcp.text, '5');
    assert.deepEqual(outputs.out, { text: '5', json: { sum: 5 } });
    assert.equal(mcp.calls.length, 1);
    assert.deepEqual(mcp.calls[0]?.arguments, { a: 2, b: 3 }, 'only the declared arguments, not `key`');
    assert.equal(mcp.calls[0]?.transport, 'streamable-http');
    assert.match(String(mcp.calls[0]?.meta?.['spur/call_id']), /\/\d+$/, 'the call carries its execution key');
  });

  it('sse: the same call over the older transport', async () => {
    const { outputs, task } = await run({ server_url: `${mcp.url}/sse`, transport: 'sse', tool: 'lookup' });
    assert.equal(task.status, 'COMPLETED', JSON.stringify(task));
    assert.equal(outputs.mcp.text, 'definition of durable');
    assert.equal(mcp.calls[0]?.transport, 'sse');
  });

  it('an image result is stored as a run file: its path in the content, its bytes downloadable under /files/', async () => {
    const { outputs, record } = await run({ server_url: `${mcp.url}/mcp`, tool: 'picture' });
    const [item] = outputs.mcp.content;
    assert.deepEqual(Object.keys(item).sort(), ['file', 'mime_type', 'type']);
    assert.deepEqual([item.type, item.mime_type], ['image', 'image/png']);
    assert.match(item.file, new RegExp(`^run_files/${record.workflow_id}/[0-9a-f]{16}\\.png$`));
    const download = await fetch(`${engine.api.baseUrl}/files/${item.file}`);
    assert.equal(download.status, 200);
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), Buffer.from(PNG_1X1, 'base64'));
  });

  it("a failing tool fails the node with the server's message, once (not retried)", async () => {
    const { record, task } = await run({ server_url: `${mcp.url}/mcp`, tool: 'fail', max_retries: 3 });
    assert.equal(record.status, 'FAILED');
    assert.equal(task.status, 'FAILED');
    assert.match(task.error, /MCP tool 'fail' failed: the lookup service is down for maintenance/);
    assert.deepEqual(
      await mcpAttempts(record.id),
      [1],
      'one attempt in the run history, max_retries 3 notwithstanding',
    );
    assert.equal(mcp.calls.length, 1);
  });

  it('an unknown tool fails the node naming the tools the server lists, not retried', async () => {
    const { record, task } = await run({ server_url: `${mcp.url}/mcp`, tool: 'nope', max_retries: 2 });
    assert.equal(task.status, 'FAILED');
    assert.match(task.error, /has no tool 'nope' \(it lists: add, lookup, fail, picture, slow\)/);
    assert.equal(mcp.calls.length, 0);
    assert.deepEqual(await mcpAttempts(record.id), [1]);
  });

  it('a server that is not there is retried by max_retries (attempts in the run history), then fails the node naming the server', async () => {
    const { record, task } = await run({
      server_url: 'http://127.0.0.1:9/mcp',
      tool: 'add',
      max_retries: 2,
    });
    assert.equal(task.status, 'FAILED');
    assert.match(task.error, /MCP server http:\/\/127\.0\.0\.1:9/);
    assert.deepEqual(await mcpAttempts(record.id), [3], 'the first try and max_retries 2 more');
  });

  it('a server that speaks only a protocol version the SDK does not fails the node naming it, without retries', async () => {
    let initializes = 0;
    const old = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const message = JSON.parse(body || '{}') as { id?: number; method?: string };
        if (message.method !== 'initialize') {
          res.writeHead(202).end();
          return;
        }
        initializes += 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: message.id,
            result: {
              protocolVersion: '1999-01-01',
              capabilities: { tools: {} },
              serverInfo: { name: 'old', version: '0' },
            },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => old.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = old.address() as AddressInfo;
      const { record, task } = await run({ server_url: `http://127.0.0.1:${port}/mcp`, tool: 'add', max_retries: 2 });
      assert.equal(task.status, 'FAILED');
      assert.match(task.error, /protocol version is not supported: 1999-01-01/);
      assert.equal(initializes, 1, 'asked once: the same server answers the same version');
      assert.deepEqual(await mcpAttempts(record.id), [1]);
    } finally {
      old.close();
    }
  });

  it('two nodes on the same server, running side by side, list its tools once per run; the next run lists again', async () => {
    const server = { server_url: `${mcp.url}/mcp` };
    const wf = await engine.http.post('/wf/', {
      name: `mcp-two-${Math.random()}`,
      definition: {
        nodes: [
          n('in', 'InputNode', { output_schema: { a: 'integer', b: 'integer', key: 'string' } }),
          n('sum', 'MCPToolNode', { ...server, tool: 'add' }),
          n('word', 'MCPToolNode', { ...server, tool: 'lookup' }),
        ],
        links: [l('in', 'sum'), l('in', 'word')],
      },
    });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    for (const run of [1, 2]) {
      const before = mcp.listings;
      const res = await engine.http.post(`/wf/${wf.body.id}/run/`, {
        initial_inputs: { in: { a: 2, b: 3, key: 'durable' } },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual([res.body.sum.json, res.body.word.text], [{ sum: 5 }, 'definition of durable']);
      assert.equal(mcp.listings - before, 1, `run ${run}: one tools/list for both nodes`);
    }
    assert.deepEqual(mcp.calls.map((c) => c.tool).sort(), ['add', 'add', 'lookup', 'lookup']);
  });

  it('an inline header value is refused when the workflow is saved (422 at the field); nothing runs', async () => {
    const res = await engine.http.post('/wf/', {
      name: `mcp-inline-${Math.random()}`,
      definition: toolWorkflow({
        server_url: `${mcp.url}/mcp`,
        tool: 'add',
        headers: { Authorization: 'Bearer sk-inline' },
      }),
    });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.deepEqual(res.body.detail[0].loc, ['body', 'definition', 'nodes', 1, 'config', 'headers', 'Authorization']);
  });

  it('a credential travels by name, to its own server only, and never shows in outputs or errors', async () => {
    const token = 'mcp-secret-token-4242';
    await setEnv(engine, { MCP_API_BASE: mcp.url, MCP_API_KEY: token });
    const headers = { Authorization: { variable: 'MCP_API_KEY', prefix: 'Bearer ' } };
    const ok = await run({ server_url: `${mcp.url}/mcp`, tool: 'fail', headers });
    assert.equal(mcp.calls[0]?.authorization, `Bearer ${token}`);
    assert.equal(ok.task.status, 'FAILED');
    // Another server (here: the same one under another name) never gets the key.
    mcp.calls.length = 0;
    const other = await run({ server_url: `${mcp.url.replace('127.0.0.1', 'localhost')}/mcp`, tool: 'add', headers });
    assert.equal(other.task.status, 'FAILED');
    assert.match(other.task.error, /MCP_API_KEY is sent only to the MCP server under MCP_API_BASE/);
    assert.equal(mcp.calls.length, 0);
    const events = await engine.http.get(`/run/${ok.record.id}/events/`);
    for (const text of [JSON.stringify(ok), JSON.stringify(other), events.text])
      assert.ok(!text.includes(token), 'the token appears nowhere');
  });
});
