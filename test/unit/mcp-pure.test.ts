import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { toolArguments } from '../../src/nodes/mcp/mcp-arguments';
import { McpServerConfig } from '../../src/nodes/mcp/mcp-config';
import { hidesSeparator, isUnderBase } from '../../src/nodes/mcp/mcp-credentials';
import { toolOutput } from '../../src/nodes/mcp/mcp-result';
import { ToolListCache } from '../../src/nodes/mcp/mcp-tool-cache';
import type { McpToolInfo } from '../../src/nodes/mcp/mcp-client';

describe('unit: MCP client rules (pure)', () => {
  it('sends a key only to a server under its base: same origin, path at or below the base path', () => {
    const under = (url: string, base: string) => isUnderBase(new URL(url), base);
    assert.ok(under('https://tools.example.com/mcp', 'https://tools.example.com'));
    assert.ok(under('https://tools.example.com/mcp', 'https://tools.example.com/'));
    assert.ok(under('https://tools.example.com/team/mcp', 'https://tools.example.com/team/'));
    assert.ok(under('https://tools.example.com/team', 'https://tools.example.com/team'));
    assert.ok(!under('https://tools.example.com/teammate/mcp', 'https://tools.example.com/team'));
    assert.ok(!under('https://tools.example.com.evil.net/mcp', 'https://tools.example.com'));
    assert.ok(!under('http://tools.example.com/mcp', 'https://tools.example.com'), 'another scheme');
    assert.ok(!under('https://tools.example.com:8443/mcp', 'https://tools.example.com'), 'another port');
    assert.ok(!under('https://tools.example.com/mcp', 'not a url'));
  });

  it('compares decoded, normalised paths: an encoded separator or dot is under no base, dot segments are resolved first', () => {
    const under = (url: string, base: string) => isUnderBase(new URL(url), base);
    const base = 'https://tools.example.com/tenantA/';
    for (const escape of [
      '..%2FtenantB/mcp',
      '..%2ftenantB',
      '..%5CtenantB',
      '%2E%2E%2FtenantB',
      '..%252FtenantB',
      'x%2Fy',
    ])
      assert.ok(!under(`https://tools.example.com/tenantA/${escape}`, base), escape);
    assert.ok(!under('https://tools.example.com/tenantA/../tenantB/mcp', base), 'literal dot segments resolved');
    assert.ok(!under('https://tools.example.com/tenantA/%2e%2e/tenantB/mcp', base), 'encoded dot segments resolved');
    assert.ok(
      !under('https://tools.example.com/tenantA/mcp', 'https://tools.example.com/tenant%41%2Fx'),
      'a base hiding a separator',
    );
    assert.ok(under('https://tools.example.com/tenant%41/mcp', base), 'other escapes compare decoded');
    assert.ok(under('https://tools.example.com/tenantA//mcp', base), 'empty segments do not count');
    assert.ok(under('https://tools.example.com/tenantA/./mcp', base));
    assert.ok(hidesSeparator('/a/..%2Fb') && hidesSeparator('/a%5c') && !hidesSeparator('/a/%41'));
    // Tomcat, Jetty and Spring read `..;` (a path parameter after `..`) as `..`: under no base either.
    for (const parameter of ['..;/tenantB/mcp', '..;jsessionid=1/tenantB', 'mcp/..;/..;/tenantB', '...'])
      assert.ok(!under(`https://tools.example.com/tenantA/${parameter}`, base), parameter);
    assert.ok(under('https://tools.example.com/tenantA/a..b/mcp', base), 'dots inside a segment are a name');
  });

  it('takes only the declared arguments: from the input itself, else from the first predecessor that has them', () => {
    const schema = { type: 'object', properties: { a: {}, b: {} } };
    assert.deepEqual(toolArguments({ a: 1, b: 2, server_url: 'x' }, schema), { a: 1, b: 2 });
    assert.deepEqual(toolArguments({ form: { a: 1 }, other: { a: 9, b: 2 } }, schema), { a: 1, b: 2 });
    assert.deepEqual(toolArguments({ form: { c: 1 } }, schema), {});
    assert.deepEqual(toolArguments({ a: 1 }, { type: 'object' }), {}, 'a tool that declares nothing gets nothing');
  });

  it('maps results: text joined, structured content or JSON text as json, binary items as data URIs', () => {
    assert.deepEqual(toolOutput({ content: [{ type: 'text', text: '{"x": 1}' }] }), {
      text: '{"x": 1}',
      json: { x: 1 },
      content: [{ type: 'text', text: '{"x": 1}' }],
    });
    const out = toolOutput({
      content: [
        { type: 'text', text: 'a' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'text', text: 'b' },
      ],
      structuredContent: { y: 2 },
    });
    assert.equal(out.text, 'a\nb');
    assert.deepEqual(out.json, { y: 2 });
    assert.deepEqual(out.content[1], { type: 'audio', mime_type: 'audio/wav', data_uri: 'data:audio/wav;base64,AAAA' });
    assert.deepEqual(toolOutput({ content: 'not a list' }), { text: '', json: null, content: [] });
  });

  it('accepts headers only as a stored credential by name, after a scheme word', () => {
    const headers = (h: unknown) => McpServerConfig.safeParse({ headers: h }).success;
    assert.ok(headers({ Authorization: { variable: 'MCP_API_KEY', prefix: 'Bearer ' } }));
    assert.ok(headers({ 'X-Api-Key': { variable: 'MCP_API_KEY_2' } }));
    assert.ok(!headers({ Authorization: 'Bearer sk-inline' }), 'an inline value');
    assert.ok(!headers({ Authorization: { variable: 'OPENAI_API_KEY' } }), "another provider's key");
    assert.ok(
      !headers({ Authorization: { variable: 'MCP_API_KEY', prefix: 'Bearer sk-inline ' } }),
      'a secret in the prefix',
    );
    assert.ok(!headers({ Authorization: { variable: 'MCP_API_KEY', value: 'x' } }), 'an extra field');
    assert.ok(!headers({ Host: { variable: 'MCP_API_KEY' } }), 'a header the transport sets');
  });

  it('docs/mcp.md names the installed SDK and exactly its protocol versions', () => {
    const root = path.join(__dirname, '..', '..');
    const doc = readFileSync(path.join(root, 'docs', 'mcp.md'), 'utf8');
    const sdk = JSON.parse(
      readFileSync(path.join(root, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8'),
    ) as { version: string };
    assert.ok(doc.includes(`\`@modelcontextprotocol/sdk\` ${sdk.version}`), `the SDK's version, ${sdk.version}`);
    const paragraph = doc.split('\n\n').find((p) => p.startsWith('**Protocol versions**')) ?? '';
    const named = [...new Set(paragraph.match(/\d{4}-\d{2}-\d{2}/g) ?? [])];
    assert.deepEqual(named.sort(), [...SUPPORTED_PROTOCOL_VERSIONS].sort());
    assert.ok(paragraph.includes(`asks for ${LATEST_PROTOCOL_VERSION}`));
  });

  describe('tool lists cached by run and server', () => {
    const tool = (name: string): McpToolInfo => ({
      name,
      description: name,
      inputSchema: { type: 'object' },
      readOnly: false,
    });
    const oneTool = JSON.stringify([tool('t')]).length;
    function counted(tools = [tool('t')]) {
      const list = () => {
        list.calls++;
        return Promise.resolve(tools);
      };
      list.calls = 0;
      return list;
    }

    it('lists once for executions of a run side by side; another run or server lists again', async () => {
      const cache = new ToolListCache();
      const list = counted();
      await Promise.all([cache.tools('r1', 's', list), cache.tools('r1', 's', list), cache.tools('r1', 's', list)]);
      assert.equal(list.calls, 1);
      await cache.tools('r2', 's', list);
      await cache.tools('r1', 'other', list);
      assert.equal(list.calls, 3);
    });

    it('keeps no failed listing: the next execution lists, and one waiting on the failure lists itself', async () => {
      const cache = new ToolListCache();
      let fail = true;
      const list = () => (fail ? Promise.reject(new Error('down')) : Promise.resolve([tool('t')]));
      const first = cache.tools('r', 's', list);
      fail = false;
      const waiting = cache.tools('r', 's', list);
      await assert.rejects(first, /down/);
      assert.deepEqual(await waiting, [tool('t')]);
      assert.equal(cache.size.entries, 1);
    });

    it('lists again once the entry expires', async () => {
      let now = 0;
      const cache = new ToolListCache({ ttlMs: 1000, maxEntries: 10, maxBytes: 1e6 }, () => now);
      const list = counted();
      await cache.tools('r', 's', list);
      now = 999;
      await cache.tools('r', 's', list);
      now = 1000;
      await cache.tools('r', 's', list);
      assert.equal(list.calls, 2);
      assert.equal(cache.size.entries, 1, 'the expired entry is gone');
    });

    it('holds at most maxEntries lists and maxBytes of them, dropping the oldest; a list over maxBytes is not kept', async () => {
      const cache = new ToolListCache({ ttlMs: 1e9, maxEntries: 3, maxBytes: 2 * oneTool });
      for (let run = 0; run < 1000; run++) await cache.tools(`r${run}`, 's', counted());
      assert.deepEqual(cache.size, { entries: 2, bytes: 2 * oneTool }, 'the byte limit binds first');
      const list = counted();
      await cache.tools('r999', 's', list);
      assert.equal(list.calls, 0, 'the newest is kept');
      await cache.tools('r0', 's', list);
      assert.equal(list.calls, 1, 'the oldest was dropped');

      const byCount = new ToolListCache({ ttlMs: 1e9, maxEntries: 3, maxBytes: 1e6 });
      for (let run = 0; run < 1000; run++) await byCount.tools(`r${run}`, 's', counted());
      assert.deepEqual(byCount.size, { entries: 3, bytes: 3 * oneTool });

      const huge = counted(Array.from({ length: 10 }, (_, i) => tool(`t${i}`)));
      await byCount.tools('big', 's', huge);
      await byCount.tools('big', 's', huge);
      assert.equal(huge.calls, 1, 'within maxBytes: kept');
      const tiny = new ToolListCache({ ttlMs: 1e9, maxEntries: 3, maxBytes: oneTool });
      await tiny.tools('big', 's', huge);
      assert.deepEqual(tiny.size, { entries: 0, bytes: 0 });
    });
  });
});
