import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { singleLlmCallNode } from '../../src/nodes/ai/single-llm-call-node.js';
import { LLM_BASE_URL_VARIABLES } from '../../src/nodes/ai/llm/provider-settings.js';
import { NodeExecutionError, TransientNodeError } from '../../src/nodes/errors.js';
import type { NodeExecutionContext, NodeInput, NodeOutput } from '../../src/nodes/types.js';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server.js';
import { devOutboundFetch } from '../support/outbound';

const INPUT: NodeInput = { input_node: { topic: 'arithmetic', question: 'What is 2+2?' } };
const PROMPTS = {
  system_message: 'You answer questions about {{ input_node.topic }}.',
  user_message: 'Q: {{input_node.question}}',
};

interface FakeContext extends NodeExecutionContext {
  heartbeats: unknown[];
  asked: string[];
}

function fakeContext(settings: Record<string, string>, signal = new AbortController().signal): FakeContext {
  const heartbeats: unknown[] = [];
  const asked: string[] = [];
  return {
    runId: 'run-1',
    nodeId: 'node-1',
    nodeTitle: 'SingleLLMCallNode_1',
    signal,
    heartbeats,
    asked,
    fetch: devOutboundFetch,
    secret: async (name) => {
      asked.push(name);
      return settings[name];
    },
    heartbeat: (details) => void heartbeats.push(details),
  };
}

async function run(
  config: Record<string, unknown>,
  ctx: NodeExecutionContext,
  input: NodeInput = INPUT,
): Promise<NodeOutput> {
  assert.ok(singleLlmCallNode.execute);
  return singleLlmCallNode.execute(singleLlmCallNode.config.parse(config), input, ctx);
}

function llmInfo(model: string, extra: Record<string, unknown> = {}) {
  return { llm_info: { model, max_tokens: 200, temperature: 0.3, top_p: 0.8, ...extra } };
}

async function rejectsWith<E extends Error>(
  promise: Promise<unknown>,
  type: new (...args: any[]) => E,
  check?: (err: E) => void,
): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof type, `expected ${type.name}, got ${String(err)}`);
    check?.(err);
    return true;
  });
}

describe('SingleLLMCallNode.execute', () => {
  let server: FakeLlmServer;
  beforeEach(async () => {
    server = await startFakeLlmServer();
  });
  afterEach(async () => {
    await server.close();
  });

  const openAi = () => ({ OPENAI_API_KEY: 'sk-openai', OPENAI_API_BASE: `${server.url}/v1` });
  const last = () => {
    const request = server.requests.at(-1);
    assert.ok(request, 'the fake server saw no request');
    return request;
  };

  describe('providers', () => {
    it('openai/*: OpenAI SDK, Bearer key, JSON-schema mode, rendered messages', async () => {
      const ctx = fakeContext(openAi());
      const out = await run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS }, ctx);
      assert.deepEqual(out, { output: 'echo: Q: What is 2+2?' });
      const req = last();
      assert.equal(req.path, '/v1/chat/completions');
      assert.equal(req.headers.authorization, 'Bearer sk-openai');
      assert.equal(req.body.model, 'gpt-4o');
      assert.equal(req.body.messages.length, 2);
      assert.equal(req.body.messages[0].role, 'system');
      assert.match(
        req.body.messages[0].content,
        /^You answer questions about arithmetic\.\n\nRespond with a single JSON object/,
      );
      assert.deepEqual(req.body.messages[1], { role: 'user', content: 'Q: What is 2+2?' });
      assert.equal(req.body.response_format.type, 'json_schema');
      assert.deepEqual(req.body.response_format.json_schema.schema, {
        type: 'object',
        properties: { output: { type: 'string' } },
      });
      assert.equal(req.body.max_completion_tokens, 200);
      assert.equal(req.body.temperature, 0.3);
      assert.equal(req.body.top_p, 0.8);
      // No beat of its own (a regular activity's first goes to Temporal at once): the node's periodic one keeps it alive.
      assert.deepEqual(ctx.heartbeats, []);
    });

    it('anthropic/*: Messages API, x-api-key, system prompt as a parameter', async () => {
      const ctx = fakeContext({ ANTHROPIC_API_KEY: 'sk-ant', ANTHROPIC_API_BASE: server.url });
      const out = await run({ ...llmInfo('anthropic/claude-3-5-haiku-latest'), ...PROMPTS }, ctx);
      assert.deepEqual(out, { output: 'echo: Q: What is 2+2?' });
      const req = last();
      assert.equal(req.path, '/v1/messages');
      assert.equal(req.headers['x-api-key'], 'sk-ant');
      assert.equal(req.headers.authorization, undefined);
      assert.ok(req.headers['anthropic-version']);
      assert.equal(req.body.model, 'claude-3-5-haiku-latest');
      assert.match(
        req.body.system,
        /^You answer questions about arithmetic\.\n\nRespond with a single JSON object .*"output"/s,
      );
      assert.deepEqual(req.body.messages, [{ role: 'user', content: 'Q: What is 2+2?' }]);
      assert.equal(req.body.max_tokens, 200);
      assert.equal(req.body.temperature, 0.3);
    });

    it('gemini/*: OpenAI-compatible endpoint with the Gemini key', async () => {
      const ctx = fakeContext({ GEMINI_API_KEY: 'gm-key', GEMINI_API_BASE: server.url });
      const out = await run({ ...llmInfo('gemini/gemini-2.0-flash'), ...PROMPTS }, ctx);
      assert.deepEqual(out, { output: 'echo: Q: What is 2+2?' });
      const req = last();
      assert.equal(req.path, '/chat/completions');
      assert.equal(req.headers.authorization, 'Bearer gm-key');
      assert.equal(req.body.model, 'gemini-2.0-flash');
      assert.equal(req.body.max_tokens, 200);
      assert.equal(req.body.response_format.type, 'json_schema');
    });

    it('deepseek/*: OpenAI-compatible, JSON-object mode', async () => {
      const ctx = fakeContext({ DEEPSEEK_API_KEY: 'ds-key', DEEPSEEK_API_BASE: server.url });
      const out = await run({ ...llmInfo('deepseek/deepseek-chat'), ...PROMPTS }, ctx);
      assert.deepEqual(out, { output: 'echo: Q: What is 2+2?' });
      const req = last();
      assert.equal(req.path, '/chat/completions');
      assert.equal(req.headers.authorization, 'Bearer ds-key');
      assert.equal(req.body.model, 'deepseek-chat');
      assert.deepEqual(req.body.response_format, { type: 'json_object' });
    });

    it('deepseek-reasoner: no temperature and no JSON mode (the prompt still asks for JSON)', async () => {
      const ctx = fakeContext({ DEEPSEEK_API_KEY: 'ds-key', DEEPSEEK_API_BASE: server.url });
      await run({ ...llmInfo('deepseek/deepseek-reasoner'), ...PROMPTS }, ctx);
      const req = last();
      assert.equal(req.body.model, 'deepseek-reasoner');
      assert.equal(req.body.temperature, undefined);
      assert.equal(req.body.top_p, undefined);
      assert.equal(req.body.response_format, undefined);
      assert.match(req.body.messages[0].content, /JSON Schema/);
    });

    it('ollama/*: OLLAMA_BASE_URL + /v1, no key needed', async () => {
      const ctx = fakeContext({ OLLAMA_BASE_URL: `${server.url}/` });
      const out = await run({ ...llmInfo('ollama/llama3.2:1b'), ...PROMPTS }, ctx);
      assert.deepEqual(out, { output: 'echo: Q: What is 2+2?' });
      const req = last();
      assert.equal(req.path, '/v1/chat/completions');
      assert.equal(req.body.model, 'llama3.2:1b');
    });

    it('ollama deepseek-r1: inline <think> reasoning is stripped before parsing', async () => {
      server.enqueue({ content: '<think>\n2+2 is 4\n</think>\n{"output": "4"}' });
      const out = await run(
        { ...llmInfo('ollama/deepseek-r1'), ...PROMPTS },
        fakeContext({ OLLAMA_BASE_URL: server.url }),
      );
      assert.deepEqual(out, { output: '4' });
    });

    it('azure/*: AzureOpenAI client, deployment URL, api-version query, api-key header', async () => {
      const ctx = fakeContext({
        AZURE_OPENAI_API_KEY: 'az-key',
        AZURE_OPENAI_ENDPOINT: `${server.url}/`,
        AZURE_OPENAI_API_VERSION: '2024-06-01',
      });
      const out = await run({ ...llmInfo('azure/gpt-4'), ...PROMPTS }, ctx);
      assert.deepEqual(out, { output: 'echo: Q: What is 2+2?' });
      const req = last();
      assert.equal(req.path, '/openai/deployments/gpt-4/chat/completions');
      assert.equal(req.query.get('api-version'), '2024-06-01');
      assert.equal(req.headers['api-key'], 'az-key');
      assert.equal(req.headers.authorization, undefined);
      assert.equal(req.body.model, 'gpt-4');
      assert.deepEqual(req.body.response_format, { type: 'json_object' });
    });

    it('routes openai/* to Azure OpenAI when AZURE_OPENAI_API_KEY is set (PySpur), the model name as deployment', async () => {
      const ctx = fakeContext({
        OPENAI_API_KEY: 'sk-x',
        OPENAI_API_BASE: `${server.url}/v1`,
        AZURE_OPENAI_API_KEY: 'az-key',
        AZURE_OPENAI_ENDPOINT: server.url,
        AZURE_OPENAI_API_VERSION: '2024-06-01',
      });
      await run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS }, ctx);
      assert.equal(last().path, '/openai/deployments/gpt-4o/chat/completions');
      assert.equal(last().headers['api-key'], 'az-key');
    });

    it('sends enable_thinking to Anthropic models that support it, with the budget and no sampling settings', async () => {
      const ctx = fakeContext({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_API_BASE: server.url });
      await run(
        {
          ...llmInfo('anthropic/claude-3-7-sonnet-latest', { max_tokens: 4000 }),
          ...PROMPTS,
          enable_thinking: true,
          thinking_budget_tokens: 2048,
        },
        ctx,
      );
      assert.deepEqual(last().body.thinking, { type: 'enabled', budget_tokens: 2048 });
      assert.equal(last().body.temperature, undefined);
      await run({ ...llmInfo('anthropic/claude-3-5-haiku-latest'), ...PROMPTS, enable_thinking: true }, ctx);
      assert.equal(last().body.thinking, undefined, 'models without thinking get none');
    });

    it('xai/*: OpenAI-compatible with XAI_API_KEY', async () => {
      const ctx = fakeContext({ XAI_API_KEY: 'xai-key', XAI_API_BASE: `${server.url}/v1` });
      await run({ ...llmInfo('xai/grok-2-latest'), ...PROMPTS }, ctx);
      assert.equal(last().headers.authorization, 'Bearer xai-key');
      assert.equal(last().body.model, 'grok-2-latest');
    });

    it("exports the base-URL settings and ignores the SDKs' own environment variables", async () => {
      assert.deepEqual(LLM_BASE_URL_VARIABLES.slice(0, 5), [
        'OPENAI_API_BASE',
        'ANTHROPIC_API_BASE',
        'GEMINI_API_BASE',
        'DEEPSEEK_API_BASE',
        'OLLAMA_BASE_URL',
      ]);
      const bogus = {
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
        OPENAI_ORG_ID: 'org-env',
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
        AZURE_OPENAI_ENDPOINT: 'http://127.0.0.1:9',
      };
      const saved = Object.fromEntries(Object.keys(bogus).map((k) => [k, process.env[k]]));
      Object.assign(process.env, bogus);
      try {
        await run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS }, fakeContext(openAi()));
        assert.equal(last().headers['openai-organization'], undefined);
        await run(
          { ...llmInfo('anthropic/claude-3-5-haiku-latest'), ...PROMPTS },
          fakeContext({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_API_BASE: server.url }),
        );
        const azure = { AZURE_OPENAI_API_KEY: 'k', AZURE_OPENAI_ENDPOINT: server.url, AZURE_OPENAI_API_VERSION: 'v' };
        await run({ ...llmInfo('azure/gpt-4'), ...PROMPTS }, fakeContext(azure));
        assert.deepEqual(
          server.requests.map((r) => r.path),
          ['/v1/chat/completions', '/v1/messages', '/openai/deployments/gpt-4/chat/completions'],
        );
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
    });
  });

  describe('messages', () => {
    it('sends few-shot examples as alternating turns and the whole input when user_message is empty', async () => {
      const few_shot_examples = [
        { input: 'What is 1+1?', output: '{"output": "2"}' },
        { input: 'What is 3+3?', output: '{"output": "6"}' },
      ];
      await run(
        { ...llmInfo('openai/gpt-4o-mini'), system_message: 'Be brief.', user_message: '', few_shot_examples },
        fakeContext(openAi()),
      );
      const roles = last().body.messages.map((m: any) => m.role);
      assert.deepEqual(roles, ['system', 'user', 'assistant', 'user', 'assistant', 'user']);
      assert.equal(last().body.messages[1].content, 'What is 1+1?');
      assert.equal(last().body.messages[4].content, '{"output": "6"}');
      assert.equal(last().body.messages[5].content, JSON.stringify(INPUT, null, 2));
    });

    it('inserts message history from message_history_variable before the user message', async () => {
      const input = {
        ...INPUT,
        chat: {
          history: [
            { role: 'user', content: 'hi' },
            { role: 'assistant', content: 'hello' },
            { role: 'tool', content: 'x' },
          ],
        },
      };
      const config = {
        ...llmInfo('openai/gpt-4o'),
        ...PROMPTS,
        enable_message_history: true,
        message_history_variable: 'chat.history',
      };
      await run(config, fakeContext(openAi()), input);
      assert.deepEqual(
        last()
          .body.messages.slice(1)
          .map((m: any) => `${m.role}:${m.content}`),
        ['user:hi', 'assistant:hello', 'user:Q: What is 2+2?'],
      );
    });

    it('clamps max_tokens to the model limit and omits it where the API rejects it', async () => {
      await run(
        { ...llmInfo('anthropic/claude-3-5-sonnet-latest', { max_tokens: 16384 }), ...PROMPTS },
        fakeContext({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_API_BASE: server.url }),
      );
      assert.equal(last().body.max_tokens, 8192);
      await run({ ...llmInfo('openai/o3-mini'), ...PROMPTS }, fakeContext(openAi()));
      assert.equal(last().body.max_completion_tokens, undefined);
      assert.equal(last().body.temperature, undefined);
    });

    it('a template error fails the node before any request', async () => {
      await rejectsWith(
        run({ ...llmInfo('openai/gpt-4o'), user_message: '{{ nothing.here }}' }, fakeContext(openAi())),
        NodeExecutionError,
        (err) => {
          assert.match(err.message, /user_message.*'nothing' is undefined/);
        },
      );
      assert.equal(server.requests.length, 0);
    });
  });

  describe('output', () => {
    const schema = JSON.stringify({
      type: 'object',
      properties: { answer: { type: 'integer' }, reason: { type: 'string' } },
      required: ['answer'],
    });

    it('parses a fenced JSON reply and validates it against output_json_schema', async () => {
      server.enqueue({ content: 'Sure!\n```json\n{"answer": 4, "reason": "2+2"}\n```' });
      const out = await run(
        { ...llmInfo('openai/gpt-4o'), ...PROMPTS, output_json_schema: schema },
        fakeContext(openAi()),
      );
      assert.deepEqual(out, { answer: 4, reason: '2+2' });
      assert.deepEqual(last().body.response_format.json_schema.schema, JSON.parse(schema));
    });

    it('a reply that does not match the schema fails the node', async () => {
      server.enqueue({ content: '{"answer": "four"}' });
      await rejectsWith(
        run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS, output_json_schema: schema }, fakeContext(openAi())),
        NodeExecutionError,
        (err) => {
          assert.match(err.message, /does not match output_json_schema.*answer/);
        },
      );
    });

    it('a non-JSON reply fails with a custom schema and is wrapped as {output} with the default one', async () => {
      server.enqueue({ content: 'just text' }, { content: 'just text' });
      await rejectsWith(
        run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS, output_json_schema: schema }, fakeContext(openAi())),
        NodeExecutionError,
        (err) => {
          assert.match(err.message, /not a JSON object/);
        },
      );
      assert.deepEqual(await run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS }, fakeContext(openAi())), {
        output: 'just text',
      });
    });

    it('an invalid output_json_schema fails before any request', async () => {
      await rejectsWith(
        run({ ...llmInfo('openai/gpt-4o'), output_json_schema: '{not json' }, fakeContext(openAi())),
        NodeExecutionError,
      );
      await rejectsWith(
        run({ ...llmInfo('openai/gpt-4o'), output_json_schema: '{"type": "no-such-type"}' }, fakeContext(openAi())),
        NodeExecutionError,
      );
      assert.equal(server.requests.length, 0);
    });
  });

  describe('errors', () => {
    it('429 → TransientNodeError with retry-after; the node does not retry itself', async () => {
      server.enqueue({ status: 429, headers: { 'retry-after': '0' } });
      const ctx = fakeContext(openAi());
      await rejectsWith(run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS }, ctx), TransientNodeError, (err) =>
        assert.equal(err.retryAfterMs, 0),
      );
      assert.equal(server.requests.length, 1);
      // The next attempt (Temporal's retry) succeeds.
      assert.deepEqual(await run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS }, ctx), {
        output: 'echo: Q: What is 2+2?',
      });
      assert.equal(server.requests.length, 2);
    });

    it('429 honours retry-after-ms and Anthropic rate limits', async () => {
      server.enqueue(
        { status: 429, headers: { 'retry-after-ms': '1500' } },
        { status: 429, headers: { 'retry-after': '7' } },
      );
      await rejectsWith(
        run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS }, fakeContext(openAi())),
        TransientNodeError,
        (err) => assert.equal(err.retryAfterMs, 1500),
      );
      const anthropic = fakeContext({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_API_BASE: server.url });
      await rejectsWith(
        run({ ...llmInfo('anthropic/claude-3-opus-latest'), ...PROMPTS }, anthropic),
        TransientNodeError,
        (err) => assert.equal(err.retryAfterMs, 7000),
      );
    });

    it('5xx → TransientNodeError', async () => {
      server.enqueue({ status: 503 });
      await rejectsWith(
        run(
          { ...llmInfo('gemini/gemini-1.5-pro'), ...PROMPTS },
          fakeContext({ GEMINI_API_KEY: 'k', GEMINI_API_BASE: server.url }),
        ),
        TransientNodeError,
      );
      assert.equal(server.requests.length, 1);
    });

    it('401 / 400 → NodeExecutionError with the provider message', async () => {
      server.enqueue({
        status: 401,
        body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } },
      });
      await rejectsWith(
        run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS }, fakeContext(openAi())),
        NodeExecutionError,
        (err) => {
          assert.match(err.message, /OpenAI.*401.*Incorrect API key provided/);
        },
      );
      server.enqueue({
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens too large' } },
      });
      await rejectsWith(
        run(
          { ...llmInfo('anthropic/claude-3-7-sonnet-latest'), ...PROMPTS },
          fakeContext({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_API_BASE: server.url }),
        ),
        NodeExecutionError,
        (err) => {
          assert.match(err.message, /Anthropic.*max_tokens too large/);
        },
      );
    });

    it('connection refused and timeouts → TransientNodeError', async () => {
      const closedPort = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const { port } = probe.address() as { port: number };
          probe.close(() => resolve(port));
        });
      });
      await rejectsWith(
        run(
          { ...llmInfo('openai/gpt-4o'), ...PROMPTS },
          fakeContext({ OPENAI_API_KEY: 'k', OPENAI_API_BASE: `http://127.0.0.1:${closedPort}/v1` }),
        ),
        TransientNodeError,
      );
      server.enqueue({ delayMs: 2000 });
      await rejectsWith(
        run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS, timeout_seconds: 0.2 }, fakeContext(openAi())),
        TransientNodeError,
        (err) => {
          assert.match(err.message, /timed out/);
        },
      );
    });

    it('cancellation rejects with the signal reason, not a provider error', async () => {
      const controller = new AbortController();
      server.enqueue({ delayMs: 2000 });
      const pending = run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS }, fakeContext(openAi(), controller.signal));
      setTimeout(() => controller.abort(new Error('activity cancelled')), 50);
      await assert.rejects(pending, /activity cancelled/);
    });

    it('a missing key → NodeExecutionError naming the variable, without touching process.env', async () => {
      const saved = process.env.OPENAI_API_KEY;
      process.env.OPENAI_API_KEY = 'from-process-env';
      try {
        await rejectsWith(
          run({ ...llmInfo('openai/gpt-4o'), ...PROMPTS }, fakeContext({ OPENAI_API_BASE: `${server.url}/v1` })),
          NodeExecutionError,
          (err) => {
            assert.match(err.message, /OPENAI_API_KEY/);
          },
        );
      } finally {
        if (saved === undefined) delete process.env.OPENAI_API_KEY;
        else process.env.OPENAI_API_KEY = saved;
      }
      await rejectsWith(
        run({ ...llmInfo('anthropic/claude-3-5-haiku-latest'), ...PROMPTS }, fakeContext({})),
        NodeExecutionError,
        (err) => assert.match(err.message, /ANTHROPIC_API_KEY/),
      );
      const azure = fakeContext({ AZURE_OPENAI_API_KEY: 'k', AZURE_OPENAI_ENDPOINT: server.url });
      await rejectsWith(run({ ...llmInfo('azure/gpt-35-turbo'), ...PROMPTS }, azure), NodeExecutionError, (err) =>
        assert.match(err.message, /AZURE_OPENAI_API_VERSION/),
      );
      assert.equal(server.requests.length, 0);
    });
  });
});
