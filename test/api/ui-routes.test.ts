import assert from 'node:assert/strict';
import { startApi, type TestApi } from '../support/api';
import { startFakeLlmServer, type FakeLlmServer } from '../support/fake-llm-server';
import { client } from '../support/http';
import { rawClient } from '../support/raw-http';

const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

describe("api: the routes PySpur's UI calls", function () {
  this.timeout(60_000);
  let api: TestApi;
  let http: ReturnType<typeof client>;
  let fake: FakeLlmServer;
  before(async () => {
    api = await startApi();
    http = client(api.baseUrl);
    fake = await startFakeLlmServer();
  });
  after(async () => {
    await api?.close();
    await fake?.close();
  });

  it("lists six or more templates in PySpur's shape; instantiating one creates its workflow", async () => {
    const list = await http.get('/templates/');
    assert.equal(list.status, 200);
    assert.ok(list.body.length >= 6);
    for (const t of list.body)
      assert.deepEqual(Object.keys(t).sort(), ['description', 'features', 'file_name', 'name']);
    const made = await http.post('/templates/instantiate/', list.body[0]);
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.equal(made.body.name, list.body[0].name);
    assert.ok(made.body.definition.nodes.length >= 3);
    const again = await http.post('/templates/instantiate/', list.body[0]);
    assert.notEqual(again.body.name, made.body.name, 'a second copy gets a free name');
    const unknown = await http.post('/templates/instantiate/', { ...list.body[0], file_name: 'nope.json' });
    assert.equal(unknown.status, 404);
    assert.equal((await http.post('/templates/instantiate/', { name: 'x' })).status, 422);
  });

  it("says Spur sends no telemetry, in PySpur's shape (true = disabled)", async () => {
    const res = await http.get('/env-mgmt/anon-data/');
    assert.equal(res.status, 200);
    assert.equal(res.body, true);
  });

  it('answers the evals page with empty lists, and a launch of an unknown suite with a 404 naming it', async () => {
    assert.deepEqual((await http.get('/evals/')).body, []);
    assert.deepEqual((await http.get('/evals/runs/')).body, []);
    const launch = await http.post('/evals/launch/', {
      workflow_id: 'S1',
      eval_name: 'gsm8k',
      output_variable: 'out-x',
    });
    assert.equal(launch.status, 404);
    assert.match(launch.body.detail, /Eval suite 'gsm8k' not found/);
  });

  it('lists, serves (streamed, previewable) and deletes run and test files by path', async () => {
    const wf = (
      await http.post('/wf/', {
        name: 'files',
        definition: { nodes: [{ id: 'in', node_type: 'InputNode', config: {} }], links: [] },
      })
    ).body;
    const other = (await http.post('/wf/', { name: 'other files' })).body;
    const started = await http.post(`/wf/${wf.id}/start_run/`, {
      initial_inputs: { in: { picture: `data:image/png;base64,${PNG_1PX}` } },
    });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const form = new FormData();
    form.append('workflow_id', wf.id);
    form.append('node_id', 'in');
    form.append('files', new Blob(['<svg onload="alert(1)"/>'], { type: 'image/svg+xml' }), 'x.svg');
    const [testPath] = (await http.post('/wf/upload_test_files/', form)).body.in as string[];
    const otherForm = new FormData();
    otherForm.append('workflow_id', other.id);
    otherForm.append('node_id', 'in');
    otherForm.append('files', new Blob(['keep me'], { type: 'text/plain' }), 'keep.txt');
    await http.post('/wf/upload_test_files/', otherForm);

    const mine = (await http.get(`/files/${wf.id}`)).body as {
      path: string;
      name: string;
      size: number;
      workflow_id: string;
      created: string;
    }[];
    const runPath = mine.find((f) => f.path.startsWith('run_files/'))!.path;
    assert.deepEqual(mine.map((f) => f.path).sort(), [runPath, testPath].sort());
    for (const f of mine) assert.equal(f.workflow_id, wf.id);
    const all = (await http.get('/files/')).body as { workflow_id: string }[];
    assert.ok(all.some((f) => f.workflow_id === other.id) && all.some((f) => f.workflow_id === wf.id));

    const png = await http.get(`/files/${runPath}`);
    assert.equal(png.status, 200);
    assert.equal(png.headers.get('content-type'), 'image/png');
    assert.equal(png.headers.get('content-disposition'), 'inline', 'the editor previews it in an <img>');
    const svg = await http.get(`/files/${testPath}`);
    assert.match(svg.headers.get('content-disposition') ?? '', /^attachment/);
    assert.equal(
      svg.headers.get('content-security-policy'),
      "sandbox; frame-ancestors 'self'",
      'script in a stored file never runs on this origin',
    );

    const raw = rawClient(api.baseUrl);
    for (const bad of [
      `/files/run_files/${wf.id}/..`,
      `/files/etc_files/${wf.id}/x`,
      `/files/run_files/${wf.id}/%2e%2e%2fx`,
      `/files/run_files/..%2f..%2f/x`,
    ]) {
      assert.ok([404, 422].includes((await raw.request({ method: 'GET', path: bad })).status), bad);
    }
    const name = runPath.split('/')[2]!;
    assert.equal((await http.delete(`/files/${wf.id}/${name}`)).status, 200);
    assert.equal((await http.get(`/files/${runPath}`)).status, 404);
    assert.equal((await http.delete(`/files/${wf.id}/${name}`)).status, 404);
    assert.equal((await http.delete(`/files/${wf.id}`)).status, 200);
    assert.deepEqual((await http.get(`/files/${wf.id}`)).body, []);
    assert.equal((await http.delete(`/files/${wf.id}`)).status, 404);
    assert.equal((await http.get(`/files/${other.id}`)).body.length, 1, "another workflow's files stay");
  });

  it('AI generate: a 400 naming the keys when none is set, then answers with the configured provider', async () => {
    const none = await http.post('/ai/generate_schema/', { description: 'a person' });
    assert.equal(none.status, 400);
    assert.match(none.body.detail, /OPENAI_API_KEY/);
    for (const [name, value] of [
      ['OPENAI_API_BASE', `${fake.url}/v1`],
      ['OPENAI_API_KEY', 'sk-ui-test'],
    ]) {
      assert.equal((await http.post('/env-mgmt/', { name, value })).status, 200);
    }
    const schema = {
      type: 'object',
      properties: { name: { type: 'string', description: 'Full name' } },
      required: ['name'],
    };
    fake.enqueue({ content: `\`\`\`json\n${JSON.stringify(schema)}\n\`\`\`` });
    const generated = await http.post('/ai/generate_schema/', {
      description: 'a person with a name',
      existing_schema: '{"type":"object"}',
    });
    assert.equal(generated.status, 200, JSON.stringify(generated.body));
    assert.deepEqual(generated.body, schema);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.headers.authorization, 'Bearer sk-ui-test');
    assert.match(JSON.stringify(sent.body.messages), /a person with a name/);

    fake.enqueue({ content: 'not a schema' });
    assert.equal((await http.post('/ai/generate_schema/', { description: 'x' })).status, 400);

    fake.enqueue({ content: 'You are a careful reviewer.\n\n# Instructions\n1. Read {{ input.text }}' });
    const message = await http.post('/ai/generate_message/', {
      description: 'a reviewer',
      message_type: 'system',
      available_variables: ['input.text'],
    });
    assert.equal(message.status, 200);
    assert.match(message.body.message, /^You are a careful reviewer/);
    assert.match(JSON.stringify(fake.requests.at(-1)!.body.messages), /input\.text/);

    fake.enqueue({ status: 401, body: { error: { message: 'bad key' } } });
    const refused = await http.post('/ai/generate_message/', { description: 'x', message_type: 'user' });
    assert.equal(refused.status, 502);
    assert.match(refused.body.detail, /bad key/);
    assert.equal(
      (await http.post('/ai/generate_message/', { description: 'x', message_type: 'assistant' })).status,
      422,
    );
  });
});
