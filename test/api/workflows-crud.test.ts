import assert from 'node:assert/strict';
import { startApi, type TestApi } from '../support/api';
import { linearDefinition } from '../support/fixtures';
import { client } from '../support/http';

const DEFAULT_INPUT_CONFIG = {
  output_schema: { input_1: 'string' },
  output_json_schema: '{"type": "object", "properties": {"input_1": {"type": "string"} } }',
  has_fixed_output: false,
  enforce_schema: false,
};

describe('api: /wf/ create, get, update, reset, duplicate, delete', () => {
  let api: TestApi;
  let http: ReturnType<typeof client>;
  before(async () => {
    api = await startApi();
    http = client(api.baseUrl);
  });
  after(() => api.close());

  it('creates a default WORKFLOW definition when none is given', async () => {
    const res = await http.post('/wf/', { name: 'Default one' });
    assert.equal(res.status, 200);
    assert.match(res.body.id, /^S\d+$/);
    assert.equal(res.body.name, 'Default one');
    assert.equal(res.body.description, '');
    assert.deepEqual(res.body.definition, {
      nodes: [
        {
          id: 'input_node',
          title: 'input_node',
          parent_id: null,
          node_type: 'InputNode',
          config: DEFAULT_INPUT_CONFIG,
          coordinates: { x: 100, y: 100 },
          dimensions: null,
          subworkflow: null,
        },
      ],
      links: [],
      test_inputs: [],
      spur_type: 'workflow',
    });
    assert.equal(res.body.created_at, res.body.updated_at);
    assert.ok(!Number.isNaN(Date.parse(res.body.created_at)));
  });

  it('creates the default CHATBOT definition for a chatbot without nodes; an agent without nodes becomes a workflow', async () => {
    const chat = await http.post('/wf/', { name: 'Chat', definition: { nodes: [], links: [], spur_type: 'CHATBOT' } });
    assert.equal(chat.status, 200);
    assert.equal(chat.body.definition.spur_type, 'chatbot');
    assert.deepEqual(
      chat.body.definition.nodes.map((n: { id: string }) => n.id),
      ['input_node', 'output_node'],
    );
    assert.deepEqual(Object.keys(JSON.parse(chat.body.definition.nodes[0].config.output_json_schema).properties), [
      'user_message',
      'session_id',
      'message_history',
    ]);
    const agent = await http.post('/wf/', { name: 'Agent', definition: { nodes: [], links: [], spur_type: 'agent' } });
    assert.equal(agent.body.definition.spur_type, 'workflow');
  });

  it('stores a given definition normalised: blank titles become ids, lowercase spur_type, LLM model prefixes, router handles', async () => {
    const res = await http.post('/wf/', {
      name: 'Normalised',
      definition: {
        nodes: [
          { id: 'in', node_type: 'InputNode', title: '  ' },
          { id: 'llm', node_type: 'SingleLLMCallNode', config: { llm_info: { model: 'gpt-4o', max_tokens: 100 } } },
          { id: 'r', node_type: 'RouterNode', coordinates: { x: '1.5', y: 2 } },
          { id: 'a', node_type: 'OutputNode' },
        ],
        links: [
          { source_id: 'in', target_id: 'llm' },
          { source_id: 'llm', target_id: 'r' },
          { source_id: 'r', target_id: 'a', source_handle: 'route1', target_handle: 'route1' },
        ],
        spur_type: 'AGENT',
        ignored_extra: true,
      },
    });
    assert.equal(res.status, 200);
    const def = res.body.definition;
    assert.equal(def.nodes[0].title, 'in');
    assert.equal(def.nodes[1].config.llm_info.model, 'openai/gpt-4o');
    assert.deepEqual(def.nodes[2].coordinates, { x: 1.5, y: 2 });
    assert.equal(def.links[2].target_handle, 'r.route1');
    assert.equal(def.links[0].target_handle, null);
    assert.equal(def.spur_type, 'agent');
    assert.equal('ignored_extra' in def, false);
  });

  it('makes a taken name unique with a timestamp suffix on create', async () => {
    await http.post('/wf/', { name: 'Twin' });
    const second = await http.post('/wf/', { name: 'Twin' });
    assert.equal(second.status, 200);
    assert.match(second.body.name, /^Twin \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const third = await http.post('/wf/', { name: 'Twin' });
    assert.equal(third.status, 200);
    assert.notEqual(third.body.name, second.body.name);
    assert.ok(third.body.name.startsWith('Twin '));
  });

  it('names an empty name "Untitled Workflow"', async () => {
    const res = await http.post('/wf/', { name: '' });
    assert.ok(res.body.name.startsWith('Untitled Workflow'));
  });

  it('rejects a body without name (422 missing, loc body.name, input = the body)', async () => {
    const res = await http.post('/wf/', { description: 'x' });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.detail, [
      { type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: { description: 'x' } },
    ]);
  });

  it('rejects wrong types and an unknown spur_type with pydantic-style items', async () => {
    const res = await http.post('/wf/', { name: 5, definition: { nodes: [], links: [], spur_type: 'robot' } });
    assert.equal(res.status, 422);
    const types = res.body.detail.map((d: { type: string; loc: unknown[] }) => `${d.type}@${d.loc.join('.')}`).sort();
    assert.deepEqual(types, ['enum@body.definition.spur_type', 'string_type@body.name']);
  });

  it('gets a workflow and answers 404 for an unknown id', async () => {
    const created = await http.post('/wf/', { name: 'Gettable' });
    const res = await http.get(`/wf/${created.body.id}/`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, created.body);
    const missing = await http.get('/wf/S999999/');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { detail: 'Workflow not found' });
  });

  it('updates name, description and definition; omitted description becomes empty', async () => {
    const created = await http.post('/wf/', { name: 'Before', description: 'old' });
    const res = await http.put(`/wf/${created.body.id}/`, { name: 'After', definition: linearDefinition() });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'After');
    assert.equal(res.body.description, '');
    assert.equal(res.body.definition.nodes.length, 2);
    assert.equal(res.body.created_at, created.body.created_at);
    assert.ok(Date.parse(res.body.updated_at) >= Date.parse(created.body.updated_at));
  });

  it('checks 404 before 400 on update, then requires a definition (400)', async () => {
    const unknown = await http.put('/wf/S424242/', { name: 'x' });
    assert.equal(unknown.status, 404);
    const created = await http.post('/wf/', { name: 'Needs def' });
    for (const body of [{ name: 'x' }, { name: 'x', definition: null }]) {
      const res = await http.put(`/wf/${created.body.id}/`, body);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { detail: 'Workflow definition is required to update a workflow' });
    }
  });

  it('refuses to rename onto a taken name with 409', async () => {
    await http.post('/wf/', { name: 'Taken name' });
    const other = await http.post('/wf/', { name: 'Free name' });
    const res = await http.put(`/wf/${other.body.id}/`, { name: 'Taken name', definition: linearDefinition() });
    assert.equal(res.status, 409);
    assert.match(res.body.detail, /Taken name/);
    assert.equal((await http.get(`/wf/${other.body.id}/`)).body.name, 'Free name');
  });

  it('resets to the single input node, keeping name and description', async () => {
    const created = await http.post('/wf/', {
      name: 'Resettable',
      description: 'keep me',
      definition: { ...linearDefinition(), spur_type: 'agent' },
    });
    const res = await http.put(`/wf/${created.body.id}/reset/`);
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Resettable');
    assert.equal(res.body.description, 'keep me');
    assert.equal(res.body.definition.spur_type, 'workflow');
    assert.deepEqual(
      res.body.definition.nodes.map((n: { id: string }) => n.id),
      ['input_node'],
    );
    assert.equal((await http.put('/wf/S777777/reset/')).status, 404);
  });

  it("duplicates as '<name> (Copy)', then suffixes a second copy", async () => {
    const created = await http.post('/wf/', { name: 'Original', description: 'd', definition: linearDefinition() });
    const copy = await http.post(`/wf/${created.body.id}/duplicate/`);
    assert.equal(copy.status, 200);
    assert.notEqual(copy.body.id, created.body.id);
    assert.equal(copy.body.name, 'Original (Copy)');
    assert.equal(copy.body.description, 'd');
    assert.deepEqual(copy.body.definition, created.body.definition);
    const again = await http.post(`/wf/${created.body.id}/duplicate/`);
    assert.match(again.body.name, /^Original \(Copy\) \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    assert.equal((await http.post('/wf/S888888/duplicate/')).status, 404);
  });

  it('deletes with 204 and no body; the workflow and its versions are gone', async () => {
    const created = await http.post('/wf/', { name: 'Doomed' });
    const res = await http.delete(`/wf/${created.body.id}/`);
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    assert.equal((await http.get(`/wf/${created.body.id}/`)).status, 404);
    assert.equal((await http.delete(`/wf/${created.body.id}/`)).status, 404);
  });

  it('answers concurrent deletes of one workflow with 204 or 404, never 500 (found by the fuzz test)', async () => {
    const created = await http.post('/wf/', { name: 'Deleted twice' });
    const form = new FormData();
    form.append('workflow_id', created.body.id);
    form.append('node_id', 'input_node');
    for (let i = 0; i < 5; i++) form.append('files', new Blob([`file ${i}`]), `f${i}.txt`);
    assert.equal((await http.post('/wf/upload_test_files/', form)).status, 200);
    const statuses = await Promise.all(
      Array.from({ length: 4 }, async () => (await http.delete(`/wf/${created.body.id}/`)).status),
    );
    assert.ok(
      statuses.every((s) => s === 204 || s === 404),
      statuses.join(),
    );
    assert.ok(statuses.includes(204), statuses.join());
    assert.equal(
      await api.mongo.collection('test_files.files').countDocuments({ 'metadata.workflow_id': created.body.id }),
      0,
    );
  });

  it('lists output variables of leaf nodes in definition order', async () => {
    const fresh = await http.post('/wf/', { name: 'Vars default' });
    assert.deepEqual((await http.get(`/wf/${fresh.body.id}/output_variables/`)).body, [
      { node_id: 'input_node', variable_name: 'input_1', prefixed_variable: 'input_node-input_1' },
    ]);
    const def = linearDefinition();
    def.nodes[1]!.config.output_schema = { answer: 'string', score: 'number' } as never;
    const wf = await http.post('/wf/', { name: 'Vars linear', definition: def });
    assert.deepEqual((await http.get(`/wf/${wf.body.id}/output_variables/`)).body, [
      { node_id: 'output_node', variable_name: 'answer', prefixed_variable: 'output_node-answer' },
      { node_id: 'output_node', variable_name: 'score', prefixed_variable: 'output_node-score' },
    ]);
    assert.equal((await http.get('/wf/S5555555/output_variables/')).status, 404);
  });
});
