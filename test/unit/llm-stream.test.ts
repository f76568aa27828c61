import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { anthropicAdapter } from '../../src/nodes/ai/llm/anthropic.js';
import { openAiChatAdapter, openAiClientOptions } from '../../src/nodes/ai/llm/openai-chat.js';
import type { ChatCompletionRequest, LlmAdapter } from '../../src/nodes/ai/llm/types.js';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server.js';
import { devOutboundFetch } from '../support/outbound';

describe('LLM adapters: streamed completions', () => {
  let server: FakeLlmServer;
  let adapter: LlmAdapter;
  before(async () => {
    server = await startFakeLlmServer();
    const client = new OpenAI(
      openAiClientOptions('sk-test', `${server.url}/v1`, {
        secret: async () => undefined,
        timeoutMs: 10_000,
        fetch: devOutboundFetch,
      }),
    );
    adapter = openAiChatAdapter(client, {
      provider: 'OpenAI',
      jsonMode: 'json_schema',
      maxTokensParam: 'max_completion_tokens',
    });
  });
  after(() => server.close());

  const request: ChatCompletionRequest = {
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'hi' }],
    jsonSchema: { type: 'object' },
  };

  it('hands each piece to onText and returns what the same request returns unstreamed', async () => {
    const reply = { chunks: ['{"a": ', '"one', ' two"}'], usage: { input: 7, output: 3 } };
    server.enqueue({ content: reply.chunks.join(''), usage: reply.usage }, reply);
    const plain = await adapter.chatCompletion(request);
    const pieces: string[] = [];
    const streamed = await adapter.chatCompletion({ ...request, onText: (t) => pieces.push(t) });
    assert.deepEqual(streamed, plain);
    assert.deepEqual(pieces, reply.chunks);
    assert.deepEqual(streamed.usage, { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    const [first, second] = server.requests.slice(-2).map((r) => r.body);
    assert.equal(first.stream, undefined);
    assert.equal(second.stream, true);
    assert.deepEqual(
      { ...second, stream: undefined, stream_options: undefined },
      { ...first, stream: undefined, stream_options: undefined },
      'the same request otherwise',
    );
  });

  it('does not stream a request that offers tools (tool calls stay one reply)', async () => {
    server.enqueue({ toolCalls: [{ id: 'c1', name: 'f', arguments: { x: 1 } }] });
    const pieces: string[] = [];
    const reply = await adapter.chatCompletion({
      ...request,
      tools: [{ name: 'f', description: 'f', parameters: { type: 'object' } }],
      onText: (t) => pieces.push(t),
    });
    assert.equal(server.requests.at(-1)?.body.stream, undefined);
    assert.deepEqual(reply.toolCalls, [{ id: 'c1', name: 'f', arguments: '{"x":1}' }]);
    assert.deepEqual(pieces, []);
  });

  it('anthropic: streams text pieces and returns the message the unstreamed call returns', async () => {
    const settings: Record<string, string> = { ANTHROPIC_API_KEY: 'sk-ant', ANTHROPIC_API_BASE: server.url };
    const claude = await anthropicAdapter({
      secret: async (name) => settings[name],
      timeoutMs: 10_000,
      fetch: devOutboundFetch,
    });
    const reply = { chunks: ['{"a": ', '"one', ' two"}'], usage: { input: 5, output: 4 } };
    server.enqueue({ content: reply.chunks.join(''), usage: reply.usage }, reply);
    const claudeRequest = { ...request, model: 'claude-3-5-haiku-latest' };
    const plain = await claude.chatCompletion(claudeRequest);
    const pieces: string[] = [];
    const streamed = await claude.chatCompletion({ ...claudeRequest, onText: (t) => pieces.push(t) });
    assert.deepEqual(streamed, plain);
    assert.deepEqual(pieces, reply.chunks);
    assert.deepEqual(streamed.usage, { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });
    assert.equal(server.requests.at(-1)?.body.stream, true);
    server.enqueue({
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens too large' } },
    });
    await assert.rejects(
      claude.chatCompletion({ ...claudeRequest, onText: () => undefined }),
      /Anthropic API error: 400.*max_tokens too large/,
    );
  });

  it('an error status fails a streamed request as it fails an unstreamed one', async () => {
    server.enqueue({ status: 401, body: { error: { message: 'bad key' } } });
    await assert.rejects(
      adapter.chatCompletion({ ...request, onText: () => undefined }),
      /OpenAI API error: 401 bad key/,
    );
  });
});
