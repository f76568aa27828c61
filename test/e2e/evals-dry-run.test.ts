// Evals send nothing: an eval's rows (and run_partial) are dry runs. Nodes that post, send or write
// (Slack, e-mail, HTTP writes, MCP tools not declared read-only) record what they would have sent
// and hand on a stub; reads run as usual; human pauses resolve by the suite's policy.
import assert from 'node:assert/strict';
import { type Engine, startEngine } from '../support/engine';
import { type FakeServices, startFakeServices } from '../support/fake-services';
import { type FakeMcpServer, startFakeMcpServer } from '../support/fake-mcp-server';
import { type FakeHttpApi, startFakeHttpApi } from '../support/fake-http-api';
import { CREDENTIALS, fakeBases, setEnv } from '../support/integration-runs';
import { createSuite, createWorkflow, uploadRows, waitForEval } from '../support/evals';
import { l, n } from '../support/graphs';

const HTTP_KEY = 'http-key-of-the-dry-run-test-0001';
const ROWS = [
  { reply: 'r1', a: 1, b: 2, key: 'durable', answer: 'r1' },
  { reply: 'r2', a: 3, b: 4, key: 'workflow', answer: 'r2' },
];

describe('e2e: evals and partial runs send nothing', function () {
  this.timeout(240_000);
  let engine: Engine;
  let fake: FakeServices;
  let mcp: FakeMcpServer;
  let api: FakeHttpApi;
  let actsId: string;
  let datasetId: string;

  /** in → slack, mail, write (MCP add), read (MCP lookup), post (HTTP POST), get (HTTP GET) → out. */
  const actsDefinition = () => {
    const acting = [
      n('slack', 'SlackNotifyNode', { channel: 'C1', message: 'answer {{ in.reply }}' }),
      n('mail', 'SendEmailNode', {
        from_template: 'bot@example.org',
        to_template: 'ops@example.org',
        subject_template: 'Row {{ in.reply }}',
        content_template: 'Body {{ in.reply }}',
      }),
      n('write', 'MCPToolNode', { server_url: `${mcp.url}/mcp`, tool: 'add' }),
      n('read', 'MCPToolNode', { server_url: `${mcp.url}/mcp`, tool: 'lookup' }),
      n('post', 'HTTPRequestNode', {
        method: 'POST',
        url: `${api.url}/v1/notes`,
        headers: { 'X-Team': { variable: 'HTTP_API_KEY', prefix: '' } },
        body: '{"note": "{{ in.reply }}"}',
      }),
      n('get', 'HTTPRequestNode', { method: 'GET', url: `${api.url}/v1/items/{{ in.reply }}` }),
    ];
    return {
      nodes: [
        n('in', 'InputNode', { output_schema: { reply: 'string', a: 'integer', b: 'integer', key: 'string' } }),
        ...acting,
        n('out', 'OutputNode', {
          output_schema: { answer: 'string', slack: 'string', looked_up: 'string', got: 'integer' },
          output_map: { answer: 'in.reply', slack: 'slack.status', looked_up: 'read.text', got: 'get.status' },
        }),
      ],
      links: [l('in', 'out'), ...acting.flatMap((node) => [l('in', node.id), l(node.id, 'out')])],
    };
  };

  /** What reached the outside, by kind: the oracle of every test here. */
  const reached = () => ({
    slack: fake.to('slack').length,
    email: fake.to('resend').length,
    mcpWrites: mcp.calls.filter((c) => c.tool === 'add').length,
    mcpReads: mcp.calls.filter((c) => c.tool === 'lookup').length,
    httpWrites: api.seen.filter((r) => r.method === 'POST').length,
    httpReads: api.seen.filter((r) => r.method === 'GET').length,
  });
  const forget = () => {
    fake.requests.length = 0;
    mcp.calls.length = 0;
    api.seen.length = 0;
  };

  async function evalOf(suite: string, workflowId: string) {
    const res = await engine.http.post('/evals/launch/', {
      workflow_id: workflowId,
      eval_name: suite,
      output_variable: 'out-answer',
      num_samples: ROWS.length,
    });
    assert.equal(res.status, 200, res.text);
    return waitForEval(engine.http, res.body.run_id);
  }
  /** A suite over the rows, scored exactly, feeding the workflow `columns`. */
  const suiteOver = (name: string, columns: string[], extra: Record<string, unknown> = {}) =>
    createSuite(engine.http, {
      name,
      dataset_id: datasetId,
      answer_column: 'answer',
      input_columns: columns,
      scorer: { type: 'exact' },
      ...extra,
    });
  const examplesOf = (run: Record<string, any>) => run.results.subset_metrics.default.per_example_results as any[];

  before(async () => {
    engine = await startEngine({ SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' });
    [fake, mcp, api] = await Promise.all([startFakeServices(), startFakeMcpServer(), startFakeHttpApi()]);
    await setEnv(engine, {
      ...fakeBases(fake),
      ...CREDENTIALS,
      HTTP_API_BASE: `${api.url}/v1`,
      HTTP_API_KEY: HTTP_KEY,
    });
    actsId = await createWorkflow(engine.http, 'acts', actsDefinition());
    datasetId = await uploadRows(engine.http, 'dry rows', ROWS);
    await suiteOver('dry', ['reply', 'a', 'b', 'key']);
  });
  after(async () => {
    await engine?.close();
    await Promise.all([fake?.close(), mcp?.close(), api?.close()]);
  });
  beforeEach(forget);

  it('a run of the workflow acts: each fake receives its request (what the evals below must not send)', async () => {
    const res = await engine.http.post(`/wf/${actsId}/run/`, { initial_inputs: { in: ROWS[0] } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.out.slack, 'success');
    assert.deepEqual(reached(), { slack: 1, email: 1, mcpWrites: 1, mcpReads: 1, httpWrites: 1, httpReads: 1 });
  });

  it('an eval sends no Slack message, e-mail, MCP write or HTTP POST; reads run; each example shows what would have gone', async () => {
    const run = await evalOf('dry', actsId);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run).slice(0, 800));
    assert.deepEqual(reached(), { slack: 0, email: 0, mcpWrites: 0, mcpReads: 2, httpWrites: 0, httpReads: 2 });

    const examples = examplesOf(run);
    assert.deepEqual(
      examples.map((e) => e.is_correct),
      [true, true],
    );
    for (const [i, example] of examples.entries()) {
      const reply = ROWS[i]?.reply as string;
      const byNode = new Map((example.dry_run as any[]).map((d) => [d.node_id, d.request]));
      assert.deepEqual([...byNode.keys()].sort(), ['mail', 'post', 'slack', 'write']);
      const slack = byNode.get('slack');
      assert.equal(slack.method, 'POST');
      assert.equal(slack.url, `${fake.base('slack')}/chat.postMessage`);
      assert.deepEqual(JSON.parse(slack.body), { channel: 'C1', text: `answer ${reply}` });
      assert.equal(slack.headers.authorization, '[redacted]');
      const mail = byNode.get('mail');
      assert.equal(mail.url, `${fake.base('resend')}/emails`);
      assert.equal(JSON.parse(mail.body).subject, `Row ${reply}`);
      const post = byNode.get('post');
      assert.equal(post.url, `${api.url}/v1/notes`);
      assert.deepEqual(JSON.parse(post.body), { note: reply });
      assert.equal(post.headers['x-team'], '[redacted]', 'a stored credential under any header name');
      const write = JSON.parse(byNode.get('write').body);
      assert.equal(write.method, 'tools/call');
      assert.equal(write.params.name, 'add');
      assert.deepEqual(write.params.arguments, { a: ROWS[i]?.a, b: ROWS[i]?.b });
    }

    // The row's run: the acting tasks completed with stubs of their outputs; reads are real.
    const rowRun = (await engine.http.get(`/run/${examples[0].run_id}/`)).body;
    const task = (id: string) => rowRun.tasks.find((t: { node_id: string }) => t.node_id === id);
    assert.deepEqual(task('slack').outputs, { status: '' });
    assert.deepEqual(task('mail').outputs, { provider: '', message_id: '', status: '', raw_response: '' });
    assert.equal(task('slack').dry_run.request.method, 'POST');
    assert.equal(task('read').dry_run, null);
    assert.equal(task('read').outputs.text, 'definition of durable');
    assert.equal(task('get').outputs.status, 200);
    assert.equal(rowRun.outputs.out.slack, '');

    // No stored credential is in what a reader of the eval or its runs sees.
    const seen = JSON.stringify([run, rowRun]);
    for (const secret of [HTTP_KEY, CREDENTIALS.SLACK_BOT_TOKEN, CREDENTIALS.RESEND_API_KEY])
      assert.equal(seen.includes(secret as string), false, `${secret} leaked`);
  });

  it("a row's child run is dry too, and a WaitForCallbackNode ends at once (nothing asked for its callback)", async () => {
    const childId = await createWorkflow(engine.http, 'notifies', {
      nodes: [
        n('in', 'InputNode', { output_schema: { x: 'string' } }),
        n('slack', 'SlackNotifyNode', { channel: 'C2', message: 'child says {{ in.x }}' }),
        n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'in.x' } }),
      ],
      links: [l('in', 'slack'), l('in', 'out'), l('slack', 'out')],
    });
    const parentId = await createWorkflow(engine.http, 'calls a child and waits', {
      nodes: [
        n('in', 'InputNode', { output_schema: { reply: 'string' } }),
        n('sub', 'SubworkflowNode', { workflow_id: childId, input_map: { x: 'in.reply' } }),
        n('cb', 'WaitForCallbackNode', { timeout_seconds: 3600 }),
        n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'sub.answer' } }),
      ],
      links: [l('in', 'sub'), l('in', 'cb'), l('sub', 'out'), l('cb', 'out')],
    });
    await suiteOver('dry children', ['reply']);
    const run = await evalOf('dry children', parentId);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run).slice(0, 800));
    assert.deepEqual(
      examplesOf(run).map((e) => [e.run_status, e.is_correct]),
      [
        ['COMPLETED', true],
        ['COMPLETED', true],
      ],
    );
    assert.equal(fake.to('slack').length, 0, 'the child posted nothing');
    const rowRun = (await engine.http.get(`/run/${examplesOf(run)[0].run_id}/`)).body;
    const cb = rowRun.tasks.find((t: { node_id: string }) => t.node_id === 'cb');
    assert.deepEqual([cb.status, cb.dry_run], ['COMPLETED', { request: null, output_from_run: null }]);
  });

  it("in an eval of a suite made from runs, an acting node hands on the output its row's run recorded, sending nothing", async () => {
    const postsId = await createWorkflow(engine.http, 'posts', {
      nodes: [
        n('in', 'InputNode', { output_schema: { reply: 'string' } }),
        n('slack', 'SlackNotifyNode', { channel: 'C3', message: 'posting {{ in.reply }}' }),
        n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'slack.status' } }),
      ],
      links: [l('in', 'slack'), l('slack', 'out')],
    });
    for (const row of ROWS) {
      const res = await engine.http.post(`/wf/${postsId}/run/`, { initial_inputs: { in: { reply: row.reply } } });
      assert.equal(res.body.out.answer, 'success', res.text);
    }
    const sources = ((await engine.http.get(`/wf/${postsId}/runs/`)).body as { id: string }[]).map((r) => r.id);
    assert.equal(sources.length, 2);
    assert.equal(fake.to('slack').length, 2, 'the production runs posted');
    forget();
    const suite = await engine.http.post('/evals/suites/from_runs/', {
      name: 'posts regression',
      workflow_id: postsId,
      output_variable: 'out-answer',
    });
    assert.equal(suite.status, 200, suite.text);

    const run = await evalOf('posts regression', postsId);
    assert.equal(fake.to('slack').length, 0, 'the eval posted nothing');
    const examples = examplesOf(run);
    // A stub would answer status '' (the first eval above): these answer what the runs recorded.
    assert.deepEqual(
      examples.map((e) => [e.predicted_answer, e.is_correct]),
      [
        ['success', true],
        ['success', true],
      ],
    );
    const from = examples.map((e) => e.dry_run[0].output_from_run as string);
    assert.deepEqual([...from].sort(), [...sources].sort());
    for (const example of examples) assert.match(example.dry_run[0].request.body, /posting r[12]/);
  });

  it('a node type the suite declares live acts for real; the rest stay dry', async () => {
    await suiteOver('slack live', ['reply', 'a', 'b', 'key'], { live_node_types: ['SlackNotifyNode'] });
    const run = await evalOf('slack live', actsId);
    assert.equal(run.status, 'COMPLETED');
    assert.deepEqual(reached(), { slack: 2, email: 0, mcpWrites: 0, mcpReads: 2, httpWrites: 0, httpReads: 2 });
    assert.deepEqual((examplesOf(run)[0].dry_run as any[]).map((d) => d.node_id).sort(), ['mail', 'post', 'write']);
  });

  it('refuses an unknown live node type with 422 naming it, and makes no suite', async () => {
    const res = await engine.http.post('/evals/suites/', {
      name: 'bad live',
      dataset_id: datasetId,
      answer_column: 'answer',
      scorer: { type: 'exact' },
      live_node_types: ['SlackNotifyNode', 'RmRfNode'],
    });
    assert.equal(res.status, 422, res.text);
    assert.deepEqual(res.body.detail[0].loc, ['body', 'live_node_types', 1]);
    const names = ((await engine.http.get('/evals/suites/')).body as { name: string }[]).map((s) => s.name);
    assert.equal(names.includes('bad live'), false);
  });

  it('a suite made by hand cannot name a column of run ids whose recorded outputs its evals would hand on', async () => {
    const res = await engine.http.post('/evals/suites/', {
      name: 'borrowed outputs',
      dataset_id: datasetId,
      answer_column: 'answer',
      input_columns: ['reply'],
      scorer: { type: 'exact' },
      source_run_column: 'reply',
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.source_run_column, null);
  });

  describe('human pauses in an eval', () => {
    let pausingId: string;
    before(async () => {
      pausingId = await createWorkflow(engine.http, 'asks a human', {
        nodes: [
          n('in', 'InputNode', { output_schema: { reply: 'string' } }),
          n('ask', 'HumanInterventionNode', { message: 'OK to answer?' }),
          n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'ask.in.reply' } }),
        ],
        links: [l('in', 'ask'), l('ask', 'out')],
      });
      for (const pauses of ['approve', 'decline'])
        await suiteOver(`pauses ${pauses}`, ['reply'], { ...(pauses === 'approve' ? { pauses } : {}) });
    });

    it('decline (the default): each row ends CANCELED at the pause, no pause is left open for anyone', async () => {
      const run = await evalOf('pauses decline', pausingId);
      assert.equal(run.status, 'COMPLETED');
      const examples = examplesOf(run);
      assert.deepEqual(
        examples.map((e) => [e.run_status, e.is_correct]),
        [
          ['CANCELED', false],
          ['CANCELED', false],
        ],
      );
      const rowRun = (await engine.http.get(`/run/${examples[0].run_id}/`)).body;
      const ask = rowRun.tasks.find((t: { node_id: string }) => t.node_id === 'ask');
      assert.equal(ask.status, 'CANCELED');
      assert.match(ask.error, /dry run's policy \(pauses: decline\)/);
      const paused = (await engine.http.get('/wf/paused_workflows/')).body as unknown[];
      assert.deepEqual(paused, []);
    });

    it('approve: each row passes its pause with its input and completes', async () => {
      const run = await evalOf('pauses approve', pausingId);
      assert.deepEqual(
        examplesOf(run).map((e) => [e.run_status, e.predicted_answer, e.is_correct]),
        [
          ['COMPLETED', 'r1', true],
          ['COMPLETED', 'r2', true],
        ],
      );
    });
  });

  it('run_partial of an acting node sends nothing and answers the stub of its output', async () => {
    const res = await engine.http.post(`/wf/${actsId}/run_partial/`, {
      node_id: 'slack',
      initial_inputs: { in: ROWS[0] },
      partial_outputs: {},
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.slack, { status: '' });
    assert.deepEqual(reached(), { slack: 0, email: 0, mcpWrites: 0, mcpReads: 0, httpWrites: 0, httpReads: 0 });
  });
});
