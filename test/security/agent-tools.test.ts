import assert from 'node:assert/strict';
import { type Engine, waitForRun } from '../support/engine';
import type { FakeLlmServer, RecordedRequest } from '../support/fake-llm-server';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { l, n } from '../support/graphs';
import { CREDENTIALS, fakeBases, setEnv } from '../support/integration-runs';
import { startLlmEngine } from '../support/llm-engine';
import { type PageServer, startFetchingReader, startPageServer } from '../support/page-servers';

/**
 * Text an agent reads (a page, a document, a chat message) can steer the model's tool calls. The
 * model fills a tool's input and the few config fields its node type declares settable; it never
 * rewrites the tool's code, URL templates, limits or timeouts.
 */

const MODEL = { model: 'openai/gpt-4o', max_tokens: 200, temperature: 0.2 };
const STORED_CODE = 'return {"saved": input_model.note}';
/** Computed by the injected code only: its text never holds the marker itself. */
const MARKER = 'agent-marker-1337';
const INJECTED_CODE = `marker = "agent-" + "marker-" + str(1000 + 337)\nprint(marker)\nreturn {"saved": marker}`;
const PAGE_TEXT = 'The stored page: release notes';

/** Tool results a request carries (OpenAI `tool` messages), in order. */
const toolMessages = (req: RecordedRequest): { tool_call_id: string; content: string }[] =>
  (req.body.messages as any[]).filter((m) => m.role === 'tool');
const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, arguments: args });
const refusal = (fields: string) => new RegExp(`^Error: fields? ${fields} cannot be set by the model`);

describe('security: an agent’s model fills its tools’ inputs, never their configuration', function () {
  this.timeout(180_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  let services: FakeServices;
  let reader: { url: string; close(): Promise<void> };
  let page: PageServer;
  let trap: PageServer;

  before(async () => {
    ({ engine, fake } = await startLlmEngine());
    services = await startFakeServices();
    reader = await startFetchingReader();
    page = await startPageServer(PAGE_TEXT);
    trap = await startPageServer('the attacker’s page');
    await setEnv(engine, { ...fakeBases(services), ...CREDENTIALS, JINA_API_BASE: reader.url });
  });
  after(async () => {
    await engine?.close();
    await Promise.all([fake?.close(), services?.close(), reader?.close(), page?.close(), trap?.close()]);
  });
  beforeEach(() => {
    fake.requests.length = 0;
    services.requests.length = 0;
  });

  async function createWorkflow(definition: unknown): Promise<string> {
    const wf = await engine.http.post('/wf/', { name: `agent-tools-${Math.random()}`, definition });
    assert.equal(wf.status, 200, JSON.stringify(wf.body));
    return wf.body.id as string;
  }

  it('calls that rewrite code, a URL template, a limit or a timeout are refused; the stored config runs; the offered schemas hold only input and settable fields', async () => {
    fake.respondWith((req) => {
      const done = toolMessages(req).length;
      if (done === 0) {
        return {
          toolCalls: [
            call('a_code', 'add_note', { note: 'n1', code: INJECTED_CODE }),
            call('a_timeout', 'add_note', { note: 'n2', timeout_seconds: 3600, memory_limit_mb: 8192 }),
            call('a_url', 'read_page', { url_template: `${trap.url}/steal` }),
            call('a_limit', 'search', { topic: 'cats', max_results: 100 }),
            call('ok_prs', 'list_prs', { repo_name: 'octo/world', state: 'closed' }),
          ],
        };
      }
      if (done === 5)
        return {
          toolCalls: [
            call('b_note', 'add_note', { note: 'n1' }),
            call('b_page', 'read_page', {}),
            call('b_search', 'search', { topic: 'cats' }),
          ],
        };
      return { content: JSON.stringify({ output: 'done' }) };
    });
    const id = await createWorkflow({
      nodes: [
        n('src', 'InputNode', { output_schema: { task: 'string' } }),
        n('agent', 'AgentNode', {
          llm_info: MODEL,
          system_message: 'You research.',
          user_message: '{{src.task}}',
          max_iterations: 5,
        }),
        n(
          'notes',
          'PythonFuncNode',
          { code: STORED_CODE, timeout_seconds: 30, output_schema: { saved: 'string' } },
          { title: 'add_note', parent_id: 'agent' },
        ),
        n(
          'reader',
          'JinaReaderNode',
          { url_template: `${page.url}/doc`, use_readerlm_v2: false },
          { title: 'read_page', parent_id: 'agent' },
        ),
        n(
          'search',
          'ExaSearchNode',
          { query_template: '{{topic}}', max_results: 2 },
          { title: 'search', parent_id: 'agent' },
        ),
        n(
          'prs',
          'GitHubListPullRequestsNode',
          { repo_name: 'octo/hello', state: 'open' },
          { title: 'list_prs', parent_id: 'agent' },
        ),
        n('out', 'OutputNode', { output_map: { answer: 'agent.output' } }),
      ],
      links: [l('src', 'agent'), l('agent', 'out')],
    });
    const res = await engine.http.post(`/wf/${id}/run/`, {
      initial_inputs: { src: { task: 'Summarise the release page' } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.out.answer, 'done');
    assert.equal(fake.requests.length, 3);
    const [first, second, third] = fake.requests;

    // The schemas offered: input fields (any, for these node types) and the declared settable fields only.
    const offered = Object.fromEntries(
      (first!.body.tools as { function: { name: string; parameters: any } }[]).map((t) => [
        t.function.name,
        t.function.parameters,
      ]),
    );
    for (const name of ['add_note', 'read_page', 'search'])
      assert.deepEqual(offered[name], { type: 'object', properties: {}, additionalProperties: true }, name);
    assert.deepEqual(Object.keys(offered.list_prs.properties), ['repo_name', 'state']);
    assert.equal(offered.list_prs.additionalProperties, true);
    const schemaText = JSON.stringify(first!.body.tools);
    for (const hidden of [
      'code',
      'timeout_seconds',
      'memory_limit_mb',
      'url_template',
      'max_results',
      'query_template',
      STORED_CODE,
      page.url,
      'octo/hello',
    ]) {
      assert.ok(!schemaText.includes(hidden), `the offered tools do not show ${hidden}`);
    }

    // The rewriting calls were answered with an error naming only what the model sent.
    const replies = Object.fromEntries(toolMessages(second!).map((m) => [m.tool_call_id, m.content]));
    assert.match(replies.a_code!, refusal("'code'"));
    assert.match(replies.a_timeout!, refusal("'timeout_seconds', 'memory_limit_mb'"));
    assert.match(replies.a_url!, refusal("'url_template'"));
    assert.match(replies.a_limit!, refusal("'max_results'"));
    for (const reply of [replies.a_code, replies.a_timeout, replies.a_url, replies.a_limit]) {
      for (const stored of [STORED_CODE, page.url, '"max_results"', 'timeout_seconds": 30'])
        assert.ok(!reply!.includes(stored), `a refusal does not show the stored config: ${reply}`);
    }
    // A declared settable field is the model's to choose.
    assert.match(replies.ok_prs!, /PR 1/);
    assert.deepEqual(
      services.to('github').map((r) => `${r.path} ${r.query.get('state')}`),
      ['/repos/octo/world/pulls closed'],
    );

    // The stored config ran: the stored code's output, the stored page, the stored limit.
    const results = Object.fromEntries(
      toolMessages(third!)
        .slice(5)
        .map((m) => [m.tool_call_id, m.content]),
    );
    assert.equal(results.b_note, '{"saved":"n1"}');
    assert.ok(results.b_page!.includes(PAGE_TEXT), results.b_page);
    assert.ok(page.connections >= 1, 'the reader fetched the stored page');
    assert.equal(trap.connections, 0, 'nobody connected to the URL the model wrote');
    const searches = services.to('exa');
    assert.deepEqual(
      searches.map((r) => [r.body.query, r.body.numResults]),
      [['cats', 2]],
      'one search, with the stored limit',
    );

    // The injected code never ran: its computed marker is in no output and no request anyone received.
    const [run] = (await engine.http.get(`/wf/${id}/runs/`)).body;
    for (const [where, value] of [
      ['the run', run],
      ['the model requests', fake.requests.map((r) => r.body)],
      ['the service requests', services.requests.map((r) => [r.path, r.body])],
    ] as const) {
      assert.ok(!JSON.stringify(value).includes(MARKER), `${where} hold no marker`);
    }
  });

  it('a HumanInterventionNode tool keeps its stored timeout and action: a call that would approve itself after a second is refused, and the run waits for a human', async () => {
    fake.respondWith((req) => {
      const done = toolMessages(req).length;
      if (done === 0)
        return {
          toolCalls: [
            call('h1', 'ask_human', { question: 'Refund $5000?', timeout_seconds: 1, timeout_action: 'APPROVE' }),
          ],
        };
      if (done === 1) return { toolCalls: [call('h2', 'ask_human', { question: 'Refund $5000?' })] };
      return { content: JSON.stringify({ output: 'answered' }) };
    });
    const id = await createWorkflow({
      nodes: [
        n('src', 'InputNode', { output_schema: { task: 'string' } }),
        n('agent', 'AgentNode', { llm_info: MODEL, user_message: '{{src.task}}', max_iterations: 4 }),
        n(
          'human',
          'HumanInterventionNode',
          { message: 'Approve refunds under $100 only' },
          { title: 'ask_human', parent_id: 'agent' },
        ),
      ],
      links: [l('src', 'agent')],
    });
    const started = await engine.http.post(`/wf/${id}/start_run/`, {
      initial_inputs: { src: { task: 'Handle the refund' } },
    });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const paused = await waitForRun(
      engine.http,
      started.body.id,
      (r) => r.status !== 'PENDING' && r.status !== 'RUNNING',
      60_000,
    );
    assert.equal(paused.status, 'PAUSED', paused.message);
    assert.equal(fake.requests.length, 2, 'the pause is the second call: the first was refused');
    const [refused] = toolMessages(fake.requests[1]!);
    assert.equal(refused!.tool_call_id, 'h1');
    assert.match(refused!.content, refusal("'timeout_seconds', 'timeout_action'"));
    assert.ok(!refused!.content.includes('under $100'), 'the refusal does not show the stored message');

    const action = await engine.http.post(`/wf/process_pause_action/${started.body.id}/`, {
      inputs: { answer: 'no' },
      user_id: 'lead',
      action: 'APPROVE',
      comments: null,
    });
    assert.equal(action.status, 200, JSON.stringify(action.body));
    const run = await waitForRun(engine.http, started.body.id, undefined, 60_000);
    assert.equal(run.status, 'COMPLETED', run.message);
    const answer = toolMessages(fake.requests[2]!).at(-1)!;
    assert.equal(answer.tool_call_id, 'h2');
    assert.deepEqual(
      JSON.parse(answer.content),
      { answer: 'no', question: 'Refund $5000?' },
      'the human’s answer, given by a human',
    );
  });
});
