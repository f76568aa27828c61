import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Engine, startEngine } from '../support/engine';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server';
import { type FakeMcpServer, startFakeMcpServer } from '../support/fake-mcp-server';
import { runNode, setEnv } from '../support/integration-runs';

// Provider keys are write-only (masked on read), but any API caller may change a base URL setting.
// A key must never travel to a host it was not entered for: changing its base makes it read as
// unset until someone enters it again. Everything listens on loopback, with private addresses
// allowed (npm run dev), so only this rule stands between the key and the other host.

const LLM = {
  llm_info: { model: 'openai/gpt-4o-mini', max_tokens: 50, temperature: 0.1 },
  user_message: 'hello {{in.x}}',
};
const OPENAI_KEY = 'sk-entered-for-the-real-provider';
const JINA_KEY = 'jina-entered-for-the-real-reader';
const MCP_KEY = 'mcp-entered-for-tenant-a';

/** A loopback server that records every request's headers and answers a plain JSON object. */
async function recorder(): Promise<{
  url: string;
  headers: http.IncomingHttpHeaders[];
  paths: string[];
  close(): Promise<void>;
}> {
  const headers: http.IncomingHttpHeaders[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    headers.push(req.headers);
    paths.push(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    res.end('{"data": {"content": "page"}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    headers,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('security: keys follow their base', function () {
  this.timeout(120_000);
  let engine: Engine;
  let provider: FakeLlmServer;
  let other: Awaited<ReturnType<typeof recorder>>;
  let mcp: FakeMcpServer;

  before(async () => {
    engine = await startEngine({ SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' });
    provider = await startFakeLlmServer();
    other = await recorder();
    mcp = await startFakeMcpServer();
  });
  after(async () => {
    await engine?.close();
    await Promise.all([provider?.close(), other?.close(), mcp?.close()]);
  });

  it('an LLM key entered for one base is not sent when the base changes, reads as unset, and works again once entered for the new base', async () => {
    await setEnv(engine, { OPENAI_API_BASE: `${provider.url}/v1`, OPENAI_API_KEY: OPENAI_KEY });
    const first = await runNode(engine, 'SingleLLMCallNode', LLM);
    assert.equal(first.task.status, 'COMPLETED', first.task.error ?? '');
    assert.equal(provider.requests.at(-1)?.headers.authorization, `Bearer ${OPENAI_KEY}`);

    // Someone with an API key points the base elsewhere, hoping the stored key follows.
    await setEnv(engine, { OPENAI_API_BASE: `${other.url}/v1` });
    const moved = await runNode(engine, 'SingleLLMCallNode', LLM);
    assert.equal(moved.task.status, 'FAILED');
    assert.match(
      moved.task.error ?? '',
      /OPENAI_API_KEY is not set; .*entered under: after changing that, enter OPENAI_API_KEY again/,
    );
    assert.equal(other.headers.length, 0, 'the other host received nothing');
    assert.equal((await engine.http.get('/env-mgmt/OPENAI_API_KEY')).body.value, '', 'the key reads as unset');

    // Back to the base it was entered for, it works again; entered anew, it goes to the new base.
    await setEnv(engine, { OPENAI_API_BASE: `${provider.url}/v1/` });
    assert.equal(
      (await runNode(engine, 'SingleLLMCallNode', LLM)).task.status,
      'COMPLETED',
      'a trailing slash is the same base',
    );
    await setEnv(engine, { OPENAI_API_BASE: `${other.url}/v1`, OPENAI_API_KEY: 'sk-entered-for-the-other-host' });
    await runNode(engine, 'SingleLLMCallNode', LLM);
    assert.equal(other.headers.at(-1)?.authorization, 'Bearer sk-entered-for-the-other-host');
    assert.ok(
      other.headers.every((h) => !JSON.stringify(h).includes(OPENAI_KEY)),
      'the first key never reached the other host',
    );
  });

  it("an integration's optional key stays behind when its base changes: the request goes without it", async () => {
    await setEnv(engine, { JINA_API_BASE: provider.url, JINA_API_KEY: JINA_KEY });
    await setEnv(engine, { JINA_API_BASE: other.url });
    const before = other.headers.length;
    const run = await runNode(engine, 'JinaReaderNode', {
      url_template: 'https://example.com/page',
      use_readerlm_v2: false,
    });
    assert.equal(run.task.status, 'COMPLETED', run.task.error ?? '');
    assert.equal(other.headers.length, before + 1, 'the reader was called at its new base');
    assert.equal(other.headers.at(-1)?.authorization, undefined);
    assert.ok(!JSON.stringify(other.headers).includes(JINA_KEY));
  });

  it("an integration's key is not sent where a page path leaves its base's path (../, ..%2F or ..;): the node fails naming the base, the server gets nothing; a page under it is read with the key", async () => {
    // A shared gateway: the reader is one path of it, the key that path's.
    await setEnv(engine, { JINA_API_BASE: `${other.url}/jina`, JINA_API_KEY: JINA_KEY });
    const before = other.headers.length;
    for (const page of ['../admin/x', '..%2Fadmin%2Fx', '..;/admin/x']) {
      const run = await runNode(engine, 'JinaReaderNode', { url_template: page, use_readerlm_v2: false });
      assert.equal(run.task.status, 'FAILED', page);
      assert.match(run.task.error ?? '', /path leaves JINA_API_BASE .*nothing was sent/, page);
    }
    assert.equal(other.headers.length, before, 'the gateway received no request');
    const run = await runNode(engine, 'JinaReaderNode', {
      url_template: 'https://example.com/page',
      use_readerlm_v2: false,
    });
    assert.equal(run.task.status, 'COMPLETED', run.task.error ?? '');
    assert.equal(other.paths.at(-1), '/jina/https://example.com/page');
    assert.equal(other.headers.at(-1)?.authorization, `Bearer ${JINA_KEY}`);
  });

  it('an MCP key is not sent past a `..;` segment (…/tenantA/..;/mcp, which Tomcat reads as ..): the node fails naming the base, the server gets nothing', async () => {
    await setEnv(engine, { MCP_API_BASE: `${mcp.url}/tenantA/`, MCP_API_KEY: MCP_KEY });
    const requestsBefore = mcp.requests.length;
    const run = await runNode(engine, 'MCPToolNode', {
      server_url: `${mcp.url}/tenantA/..;/mcp`,
      tool: 'add',
      headers: { Authorization: { variable: 'MCP_API_KEY', prefix: 'Bearer ' } },
    });
    assert.equal(run.task.status, 'FAILED');
    assert.match(run.task.error ?? '', /MCP_API_KEY is sent only to .* under MCP_API_BASE/);
    assert.equal(mcp.requests.length, requestsBefore, 'the server received no request');
  });

  it('an MCP key is not sent to a path that leaves its base through an encoded separator (…/tenantA/..%2Fmcp): the node fails naming it, the server gets nothing', async () => {
    // The base is one tenant's path on a shared host; the server decodes `%2F` and serves `/mcp`.
    await setEnv(engine, { MCP_API_BASE: `${mcp.url}/tenantA/`, MCP_API_KEY: MCP_KEY });
    const headers = { Authorization: { variable: 'MCP_API_KEY', prefix: 'Bearer ' } };
    for (const escape of ['..%2Fmcp', '..%2fmcp', '..%5Cmcp', '%2E%2E%2Fmcp', '..%252Fmcp']) {
      const run = await runNode(engine, 'MCPToolNode', {
        server_url: `${mcp.url}/tenantA/${escape}`,
        tool: 'add',
        headers,
      });
      assert.equal(run.task.status, 'FAILED', escape);
      assert.match(run.task.error ?? '', /server_url's path has an encoded separator/, escape);
    }
    assert.deepEqual(mcp.requests, [], 'the server received no request');
    assert.deepEqual(
      mcp.calls.map((c) => c.authorization),
      [],
      'no call, so no Authorization',
    );
  });
});
