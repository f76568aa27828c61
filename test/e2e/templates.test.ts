import assert from 'node:assert/strict';
import { startEngine, waitForRun, type Engine } from '../support/engine';
import { startFakeLlmServer, type FakeLlmServer } from '../support/fake-llm-server';

type Template = { name: string; file_name: string; description: string; features: string[] };

/**
 * Spur's templates, instantiated the way the dashboard does and run with the fake LLM provider.
 * The agent and RAG templates only instantiate here: their node types (AgentNode's tool loop,
 * RetrieverNode over a vector index) execute once the chat-agents and rag branches are merged.
 */
describe('e2e: templates instantiate and run', function () {
  this.timeout(180_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  let templates: Template[];
  before(async () => {
    engine = await startEngine();
    fake = await startFakeLlmServer();
    for (const [name, value] of [
      ['OPENAI_API_BASE', `${fake.url}/v1`],
      ['OPENAI_API_KEY', 'sk-templates'],
    ]) {
      assert.equal((await engine.http.post('/env-mgmt/', { name, value })).status, 200);
    }
    templates = (await engine.http.get('/templates/')).body;
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  async function instantiate(fileName: string) {
    const template = templates.find((t) => t.file_name === fileName);
    assert.ok(template, `${fileName} is listed`);
    const res = await engine.http.post('/templates/instantiate/', template);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as {
      id: string;
      name: string;
      definition: { nodes: { id: string; node_type: string; parent_id: string | null }[]; spur_type: string };
    };
  }

  it('offers the six kinds of template, each instantiating into a workflow of known node types', async () => {
    const types = new Set(
      Object.values((await engine.http.get('/node/supported_types/')).body as Record<string, { name: string }[]>)
        .flat()
        .map((t) => t.name),
    );
    const expected = [
      'approval-flow.json',
      'batch-summary.json',
      'chatbot-memory.json',
      'agent-tools.json',
      'rag-answer.json',
      'data-cleaning.json',
    ];
    assert.deepEqual(
      templates.map((t) => t.file_name),
      expected,
    );
    for (const fileName of expected) {
      const wf = await instantiate(fileName);
      for (const node of wf.definition.nodes) assert.ok(types.has(node.node_type), `${fileName}: ${node.node_type}`);
      const fetched = await engine.http.get(`/wf/${wf.id}/`);
      assert.equal(fetched.status, 200);
    }
    const agent = await instantiate('agent-tools.json');
    assert.ok(agent.definition.nodes.filter((n) => n.parent_id === 'agent').length >= 2, 'the agent has tools');
    assert.equal((await instantiate('chatbot-memory.json')).definition.spur_type, 'chatbot');
  });

  it('approval flow pauses for a human, shows in the inbox by name, and completes when approved', async () => {
    const wf = await instantiate('approval-flow.json');
    const started = await engine.http.post(`/wf/${wf.id}/start_run/`, {
      initial_inputs: { request: { requester: 'Ada', amount: 740, purpose: 'Conference' } },
    });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    await waitForRun(engine.http, started.body.id, (r) => r.status === 'PAUSED', 60_000);
    const inbox = (await engine.http.get('/wf/paused_workflows/')).body as {
      run: { id: string };
      workflow: { name: string };
      current_pause: { pause_message: string };
    }[];
    const entry = inbox.find((p) => p.run.id === started.body.id);
    assert.ok(entry);
    assert.equal(entry.workflow.name, wf.name);
    assert.equal(entry.current_pause.pause_message, 'Approve this expense request?');
    const act = await engine.http.post(`/wf/process_pause_action/${started.body.id}/`, {
      inputs: {},
      user_id: 'reviewer',
      action: 'APPROVE',
    });
    assert.equal(act.status, 200, JSON.stringify(act.body));
    const done = await waitForRun(engine.http, started.body.id, undefined, 60_000);
    assert.equal(done.status, 'COMPLETED');
    const run = (await engine.http.get(`/run/${started.body.id}/`)).body;
    assert.deepEqual(run.outputs.decision, { summary: 'Ada asks for 740.00 for: Conference', over_limit: true });
  });

  it('batch summary runs over a dataset, one LLM call per row', async () => {
    const wf = await instantiate('batch-summary.json');
    const fd = new FormData();
    fd.append(
      'file',
      new Blob(['text\n"First, a long text about durable runs."\n"Second, another text."\n'], { type: 'text/csv' }),
      'texts.csv',
    );
    const ds = (await engine.http.post('/ds/?name=texts', fd)).body;
    fake.requests.length = 0;
    fake.enqueue({ content: '{"summary": "one"}' }, { content: '{"summary": "two"}' });
    const parent = await engine.http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 1 });
    assert.equal(parent.status, 200, JSON.stringify(parent.body));
    const done = await waitForRun(engine.http, parent.body.id, undefined, 90_000);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    const lines = (await engine.http.get(`/of/${parent.body.output_file_id}/download/`)).text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.result.summary).sort(), ['one', 'two']);
    assert.equal(fake.requests.length, 2);
    assert.match(JSON.stringify(fake.requests.map((r) => r.body.messages)), /First, a long text/);
  });

  it('chatbot with memory sends the earlier turns to the model', async () => {
    const wf = await instantiate('chatbot-memory.json');
    fake.requests.length = 0;
    fake.enqueue({ content: '{"assistant_message": "Your name is Ada."}' });
    const history = [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Nice to meet you, Ada.' },
    ];
    const res = await engine.http.post(`/wf/${wf.id}/run/`, {
      initial_inputs: { input_node: { user_message: 'What is my name?', session_id: 's1', message_history: history } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.chat_output, { assistant_message: 'Your name is Ada.' });
    const sent = fake.requests[0]!.body.messages as { role: string; content: string }[];
    assert.deepEqual(
      sent.slice(1).map((m) => m.content),
      ['My name is Ada.', 'Nice to meet you, Ada.', 'What is my name?'],
    );
  });

  it('data cleaning normalises, drops invalid and duplicate rows', async () => {
    const wf = await instantiate('data-cleaning.json');
    const records = JSON.stringify([
      { name: '  ada  lovelace ', email: 'ADA@example.org' },
      { name: 'Ada', email: 'ada@example.org ' },
      { name: 'grace hopper', email: 'grace@example.org' },
      { name: 'Bob', email: 'not-an-email' },
    ]);
    const res = await engine.http.post(`/wf/${wf.id}/run/`, { initial_inputs: { raw: { records } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.cleaned, {
      rows: [
        { name: 'Ada Lovelace', email: 'ada@example.org' },
        { name: 'Grace Hopper', email: 'grace@example.org' },
      ],
      kept: 2,
      dropped: 2,
    });
  });
});
