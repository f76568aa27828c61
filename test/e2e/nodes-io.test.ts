import assert from 'node:assert/strict';
import { startApi } from '../support/api';
import { startEngine, waitForRun, type Engine } from '../support/engine';
import { type FakeLlmServer, type RecordedRequest, startFakeLlmServer } from '../support/fake-llm-server';
import { l, n } from '../support/graphs';
import { basesFirst } from '../support/integration-runs';
import { client } from '../support/http';

const ANSWER_SCHEMA = JSON.stringify({
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
});

function llmWorkflow(model: string, userMessage = 'Q: {{src.question}}') {
  return {
    nodes: [
      n('src', 'InputNode', { output_schema: { question: 'string' } }),
      n('llm', 'SingleLLMCallNode', {
        llm_info: { model, max_tokens: 200, temperature: 0.1 },
        user_message: userMessage,
        output_json_schema: ANSWER_SCHEMA,
        output_schema: { answer: 'string' },
      }),
      n('out', 'OutputNode', { output_map: { answer: 'llm.answer' } }),
    ],
    links: [l('src', 'llm'), l('llm', 'out')],
  };
}

describe('e2e: LLM and Python nodes over HTTP', function () {
  this.timeout(90_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  before(async () => {
    engine = await startEngine();
    fake = await startFakeLlmServer();
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  async function setEnv(settings: Record<string, string>) {
    for (const [name, value] of basesFirst(settings)) {
      const res = await engine.http.post('/env-mgmt/', { name, value });
      assert.equal(res.status, 200, `${name}: ${JSON.stringify(res.body)}`);
    }
  }

  async function runBlocking(definition: unknown, question = 'life?') {
    const wf = (await engine.http.post('/wf/', { name: `llm-${Math.random()}`, definition })).body;
    const res = await engine.http.post(`/wf/${wf.id}/run/`, { initial_inputs: { src: { question } } });
    const [run] = (await engine.http.get(`/wf/${wf.id}/runs/`)).body;
    return { res, run, task: (id: string) => run.tasks.find((t: { node_id: string }) => t.node_id === id) };
  }

  const providers: {
    model: string;
    settings: () => Record<string, string>;
    path: RegExp;
    auth: (h: Record<string, unknown>) => boolean;
    sentModel: string;
  }[] = [
    {
      model: 'openai/gpt-4o',
      settings: () => ({ OPENAI_API_KEY: 'sk-openai-test-key', OPENAI_API_BASE: `${fake.url}/v1` }),
      path: /\/v1\/chat\/completions$/,
      auth: (h) => h.authorization === 'Bearer sk-openai-test-key',
      sentModel: 'gpt-4o',
    },
    {
      model: 'anthropic/claude-3-5-haiku-latest',
      settings: () => ({ ANTHROPIC_API_KEY: 'sk-ant-test-key', ANTHROPIC_API_BASE: fake.url }),
      path: /\/v1\/messages$/,
      auth: (h) => h['x-api-key'] === 'sk-ant-test-key',
      sentModel: 'claude-3-5-haiku-latest',
    },
    {
      model: 'gemini/gemini-1.5-flash',
      settings: () => ({ GEMINI_API_KEY: 'gem-test-key', GEMINI_API_BASE: `${fake.url}/v1beta/openai/` }),
      path: /\/v1beta\/openai\/chat\/completions$/,
      auth: (h) => h.authorization === 'Bearer gem-test-key',
      sentModel: 'gemini-1.5-flash',
    },
    {
      model: 'deepseek/deepseek-chat',
      settings: () => ({ DEEPSEEK_API_KEY: 'ds-test-key', DEEPSEEK_API_BASE: fake.url }),
      path: /\/chat\/completions$/,
      auth: (h) => h.authorization === 'Bearer ds-test-key',
      sentModel: 'deepseek-chat',
    },
    {
      model: 'ollama/llama3.2:1b',
      settings: () => ({ OLLAMA_BASE_URL: fake.url }),
      path: /\/v1\/chat\/completions$/,
      auth: () => true,
      sentModel: 'llama3.2:1b',
    },
    {
      model: 'azure/gpt-4',
      settings: () => ({
        AZURE_OPENAI_API_KEY: 'az-test-key',
        AZURE_OPENAI_ENDPOINT: fake.url,
        AZURE_OPENAI_API_VERSION: '2024-06-01',
      }),
      path: /\/openai\/deployments\/gpt-4\/chat\/completions$/,
      auth: (h) => h['api-key'] === 'az-test-key',
      sentModel: 'gpt-4',
    },
  ];

  for (const p of providers) {
    it(`calls ${p.model.split('/')[0]} with keys and base URL from env management`, async () => {
      await setEnv(p.settings());
      fake.requests.length = 0;
      fake.enqueue({ content: JSON.stringify({ answer: `from ${p.model}` }) });
      const { res, run } = await runBlocking(llmWorkflow(p.model));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.out, { answer: `from ${p.model}` }, run.message);
      assert.equal(run.status, 'COMPLETED');
      assert.equal(fake.requests.length, 1);
      const [req] = fake.requests;
      assert.match(req!.path, p.path);
      assert.ok(p.auth(req!.headers as Record<string, unknown>), JSON.stringify(req!.headers));
      assert.equal(req!.body.model, p.sentModel);
      assert.ok(JSON.stringify(req!.body.messages).includes('Q: life?'), 'the template was rendered');
    });
  }

  it("retries a 429 no sooner than its Retry-After (2 s, by the provider's own clock) and then succeeds", async () => {
    await setEnv({ OPENAI_API_KEY: 'sk-openai-test-key', OPENAI_API_BASE: `${fake.url}/v1` });
    fake.requests.length = 0;
    fake.enqueue(
      { status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'slow down' } } },
      { content: '{"answer": "after retry"}' },
    );
    const { res, task } = await runBlocking(llmWorkflow('openai/gpt-4o'));
    assert.deepEqual(res.body.out, { answer: 'after retry' }, JSON.stringify(task('llm')));
    assert.equal(task('llm').status, 'COMPLETED');
    assert.equal(fake.requests.length, 2);
    const [first, second] = fake.requests as [RecordedRequest, RecordedRequest];
    assert.ok(second.at - first.at >= 2000, `the retry came ${second.at - first.at} ms after the 429`);
  });

  it("gives up an attempt the provider never answers after the node's timeout_seconds, and the retry succeeds", async () => {
    await setEnv({ OPENAI_API_KEY: 'sk-openai-test-key', OPENAI_API_BASE: `${fake.url}/v1` });
    fake.requests.length = 0;
    const hangMs = 120_000;
    fake.enqueue({ delayMs: hangMs, content: '{"answer": "too late"}' }, { content: '{"answer": "second attempt"}' });
    const definition = llmWorkflow('openai/gpt-4o');
    Object.assign(definition.nodes[1]!.config, { timeout_seconds: 2 });
    const { res, task } = await runBlocking(definition);
    assert.deepEqual(res.body.out, { answer: 'second attempt' }, JSON.stringify(task('llm')));
    assert.equal(fake.requests.length, 2);
    const [first, second] = fake.requests as [RecordedRequest, RecordedRequest];
    const gap = second.at - first.at;
    // Not before the 2 s timeout, and before Temporal's own limit on the attempt (start-to-close:
    // timeout_seconds + 30 s) would have ended it: the request's timeout did.
    assert.ok(gap >= 2000 && gap < 32_000, `the retry came ${gap} ms after the hung request`);
  });

  it('fails at once on 401 and on a reply that breaks the output schema', async () => {
    fake.requests.length = 0;
    fake.enqueue({ status: 401, body: { error: { message: 'bad key' } } });
    const denied = await runBlocking(llmWorkflow('openai/gpt-4o'));
    assert.equal(denied.run.status, 'FAILED');
    assert.match(denied.task('llm').error, /bad key/);
    assert.equal(denied.task('out').error, 'Upstream failure');
    assert.equal(fake.requests.length, 1, 'no retry for an auth error');
    fake.enqueue({ content: '{"wrong": 1}' });
    const invalid = await runBlocking(llmWorkflow('openai/gpt-4o'));
    assert.equal(invalid.task('llm').status, 'FAILED');
    assert.match(invalid.run.message, /llm/);
  });

  it('fails a template that reaches into something undefined, without calling the provider', async () => {
    fake.requests.length = 0;
    const { run, task } = await runBlocking(llmWorkflow('openai/gpt-4o', '{{nothing.here}}'));
    assert.equal(run.status, 'FAILED');
    assert.match(task('llm').error, /nothing/);
    assert.equal(fake.requests.length, 0);
  });

  it('runs Python with coercion; exceptions and timeouts fail the node with a clear message', async () => {
    const py = (code: string, extra: Record<string, unknown> = {}) => ({
      nodes: [
        n('src', 'InputNode'),
        n('py', 'PythonFuncNode', { code, output_schema: { n: 'int', text: 'string' }, ...extra }),
      ],
      links: [l('src', 'py')],
    });
    const ok = await runBlocking(
      py(
        'return {"n": str(len(input_model.src.question)), "text": input_model["src"]["question"].upper(), "dropped": 1}',
      ),
    );
    assert.deepEqual(ok.res.body.py, { n: 5, text: 'LIFE?' });
    const raised = await runBlocking(py('raise ValueError("no such thing")'));
    assert.equal(raised.task('py').status, 'FAILED');
    assert.match(raised.task('py').error, /ValueError: no such thing/);
    // An endless loop that comes back FAILED with the timeout's message was stopped by it.
    const slow = await runBlocking(py('while True:\n    pass', { timeout_seconds: 1 }));
    assert.equal(slow.task('py').status, 'FAILED');
    assert.match(slow.task('py').error, /timed out after 1s/);
  });

  // What Python code cannot read or reach is tested in python-sandbox-secrets.test.ts.

  it('answers 202 with the run id when a blocking run outlives the wait limit; the run still completes', async () => {
    const impatient = await startApi({ ...engine.api.env, SPUR_BLOCKING_RUN_WAIT_SECONDS: '0.5' });
    try {
      const http = client(impatient.baseUrl);
      const definition = {
        nodes: [
          n('src', 'InputNode'),
          n('py', 'PythonFuncNode', { code: 'import time\ntime.sleep(2)\nreturn {"output": "late"}' }),
        ],
        links: [l('src', 'py')],
      };
      const wf = (await http.post('/wf/', { name: 'slow blocking', definition })).body;
      const res = await http.post(`/wf/${wf.id}/run/`, { initial_inputs: { src: { question: 'x' } } });
      assert.equal(res.status, 202);
      assert.match(res.body.run_id, /^R\d+$/);
      assert.match(res.body.detail, /poll/);
      const done = await waitForRun(http, res.body.run_id);
      assert.equal(done.status, 'COMPLETED');
      assert.deepEqual(done.outputs.py, { output: 'late' });
    } finally {
      await impatient.close();
    }
  });

  it('lets operators find runs in Temporal by Spur workflow id and status (search attributes)', async () => {
    const { res, run } = await runBlocking({
      nodes: [n('src', 'InputNode'), n('o', 'OutputNode')],
      links: [l('src', 'o')],
    });
    assert.equal(res.status, 200);
    const query = `SpurWorkflowId = "${run.workflow_id}" AND SpurRunStatus = "COMPLETED"`;
    let found: string[] = [];
    for (let i = 0; i < 50 && found.length === 0; i++) {
      found = [];
      for await (const wf of engine.api.temporal.workflow.list({ query })) {
        if (wf.workflowId.startsWith(engine.api.config.temporal.workflowIdPrefix)) found.push(wf.workflowId);
      }
      if (found.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    // Other suites share this Temporal server (and count workflows from S1 too): keep ours. The
    // dev server's SQLite visibility can list one execution twice; what matters is which.
    const prefix = engine.api.config.temporal.workflowIdPrefix;
    assert.deepEqual([...new Set(found.filter((id) => id.startsWith(prefix)))], [`${prefix}run-${run.id}`]);
  });
});
