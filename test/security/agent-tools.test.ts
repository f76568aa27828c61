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

  /** The fake model's script: the calls it makes once this many tool results are in, else its final `output`. */
  function script(turns: Record<number, ReturnType<typeof call>[]>, output: string): void {
    fake.respondWith((req) => {
      const calls = turns[toolMessages(req).length];
      return calls ? { toolCalls: calls } : { content: JSON.stringify({ output }) };
    });
  }

  it('calls that rewrite code, a URL template, a limit or a timeout are refused; the stored config runs; the offered schemas hold only input and settable fields, and the descriptions name the settable ones', async () => {
    script(
      {
        0: [
          call('a_code', 'add_note', { note: 'n1', code: INJECTED_CODE }),
          call('a_timeout', 'add_note', { note: 'n2', timeout_seconds: 3600, memory_limit_mb: 8192 }),
          call('a_url', 'read_page', { url_template: `${trap.url}/steal` }),
          call('a_limit', 'search', { topic: 'cats', max_results: 100 }),
          call('ok_prs', 'list_prs', { repo_name: 'octo/world', state: 'closed' }),
        ],
        5: [
          call('b_note', 'add_note', { note: 'n1' }),
          call('b_page', 'read_page', {}),
          call('b_search', 'search', { topic: 'cats' }),
        ],
      },
      'done',
    );
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
    // The description says which settings a call may choose, and only where there are any.
    const described = Object.fromEntries(
      (first!.body.tools as { function: { name: string; description: string } }[]).map((t) => [
        t.function.name,
        t.function.description,
      ]),
    );
    assert.match(described.list_prs!, /Settable per call: repo_name, state\.$/);
    for (const name of ['add_note', 'read_page', 'search'])
      assert.ok(!described[name]!.includes('Settable per call'), `${name}: ${described[name]}`);
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

  it('messaging tools keep their recipients: a call naming a Slack channel, an address, a sender or a provider is refused, and the fakes receive nothing for the attacker', async () => {
    const ATTACKER = ['C-attacker', 'attacker@evil.example', 'ceo@example.test'];
    script(
      {
        0: [
          call('s_channel', 'notify', { note: 'n', channel: 'C-attacker' }),
          call('s_mode', 'notify', { note: 'n', mode: 'user', message: 'to {{ note }}' }),
          call('m_to', 'mail', { note: 'n', to_template: 'attacker@evil.example' }),
          call('m_from', 'mail', { note: 'n', from_template: 'ceo@example.test', provider: 'sendgrid' }),
        ],
        4: [
          call('s_ok', 'notify', { note: 'all well' }),
          // An input field named like a recipient is input: the stored templates decide who gets it.
          call('m_ok', 'mail', { note: 'all well', to: 'attacker@evil.example' }),
        ],
      },
      'sent',
    );
    const id = await createWorkflow({
      nodes: [
        n('src', 'InputNode', { output_schema: { task: 'string' } }),
        n('agent', 'AgentNode', { llm_info: MODEL, user_message: '{{src.task}}', max_iterations: 4 }),
        n(
          'slack',
          'SlackNotifyNode',
          { channel: 'C-ops', mode: 'bot', message: 'Agent: {{ note }}' },
          { title: 'notify', parent_id: 'agent' },
        ),
        n(
          'mail',
          'SendEmailNode',
          {
            provider: 'resend',
            from_template: 'spur@example.test',
            to_template: 'ops@example.test',
            subject_template: 'From the agent',
            content_template: '{{ note }}',
          },
          { title: 'mail', parent_id: 'agent' },
        ),
        n('out', 'OutputNode', { output_map: { answer: 'agent.output' } }),
      ],
      links: [l('src', 'agent'), l('agent', 'out')],
    });
    const res = await engine.http.post(`/wf/${id}/run/`, { initial_inputs: { src: { task: 'Report status' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.out.answer, 'sent');
    assert.equal(fake.requests.length, 3);
    const [first, second, third] = fake.requests;

    // The model is shown no recipient, sender or provider field, and no settable field at all.
    for (const tool of first!.body.tools as { function: { name: string; description: string; parameters: any } }[]) {
      assert.deepEqual(tool.function.parameters, { type: 'object', properties: {}, additionalProperties: true });
      assert.ok(!tool.function.description.includes('Settable per call'), tool.function.description);
    }
    const replies = Object.fromEntries(toolMessages(second!).map((m) => [m.tool_call_id, m.content]));
    assert.match(replies.s_channel!, refusal("'channel'"));
    assert.match(replies.s_mode!, refusal("'mode', 'message'"));
    assert.match(replies.m_to!, refusal("'to_template'"));
    assert.match(replies.m_from!, refusal("'from_template', 'provider'"));
    for (const reply of Object.values(replies))
      assert.ok(!reply.includes('C-ops') && !reply.includes('ops@example.test'), `no stored recipient shown: ${reply}`);
    const results = Object.fromEntries(
      toolMessages(third!)
        .slice(4)
        .map((m) => [m.tool_call_id, m.content]),
    );
    assert.match(results.s_ok!, /success/);
    assert.match(results.m_ok!, /re_0123456789/);

    // Exactly the two allowed sends reached the services, to the stored recipients, from the stored sender.
    assert.deepEqual(
      services.to('slack').map((r) => [r.body.channel, r.body.text]),
      [['C-ops', 'Agent: all well']],
    );
    assert.deepEqual(
      services.to('resend').map((r) => [r.body.to, r.body.from, r.body.text]),
      [[['ops@example.test'], 'spur@example.test', 'all well']],
    );
    assert.equal(services.to('sendgrid').length, 0, 'the provider was not switched');
    const received = JSON.stringify(services.requests.map((r) => [r.path, r.body]));
    for (const name of ATTACKER) assert.ok(!received.includes(name), `no request names ${name}: ${received}`);
  });

  it('a HumanInterventionNode tool keeps its stored timeout and action: a call that would approve itself after a second is refused, and the run waits for a human', async () => {
    script(
      {
        0: [call('h1', 'ask_human', { question: 'Refund $5000?', timeout_seconds: 1, timeout_action: 'APPROVE' })],
        1: [call('h2', 'ask_human', { question: 'Refund $5000?' })],
      },
      'answered',
    );
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
