import assert from 'node:assert/strict';
import { toolArguments } from '../../src/nodes/mcp/mcp-arguments';
import { McpServerConfig } from '../../src/nodes/mcp/mcp-config';
import { isUnderBase } from '../../src/nodes/mcp/mcp-credentials';
import { toolOutput } from '../../src/nodes/mcp/mcp-result';

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
});
