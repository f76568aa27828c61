import assert from 'node:assert/strict';
import { startEngine, waitForRun, type Engine } from '../support/engine';

const linear = {
  nodes: [
    {
      id: 'input_node',
      title: 'input_node',
      node_type: 'InputNode',
      config: { output_schema: { question: 'string' } },
    },
    { id: 'out', title: 'Answer', node_type: 'OutputNode', config: { output_map: { answer: 'input_node.question' } } },
  ],
  links: [{ source_id: 'input_node', target_id: 'out' }],
};

describe('e2e: blocking and non-blocking runs', function () {
  this.timeout(60_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(() => engine?.close());

  it('runs blocking: outputs keyed by node id, run COMPLETED with title-keyed outputs and tasks', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'Linear', definition: linear })).body;
    const res = await http.post(`/wf/${wf.id}/run/?run_type=blocking`, {
      initial_inputs: { input_node: { question: 'why?' } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { input_node: { question: 'why?' }, out: { answer: 'why?' } });

    const runs = (await http.get(`/wf/${wf.id}/runs/`)).body;
    assert.equal(runs.length, 1);
    const run = runs[0];
    assert.equal(run.status, 'COMPLETED');
    assert.equal(run.run_type, 'blocking');
    assert.deepEqual(run.outputs, { input_node: { question: 'why?' }, Answer: { answer: 'why?' } });
    assert.deepEqual(run.initial_inputs, { input_node: { question: 'why?' } });
    assert.equal(run.percentage_complete, 100);
    assert.match(run.workflow_version_id, /^SV\d+$/);
    assert.equal(run.workflow_version.version, 1);
    assert.deepEqual(
      run.tasks.map((t: { node_id: string; status: string }) => [t.node_id, t.status]),
      [
        ['input_node', 'COMPLETED'],
        ['out', 'COMPLETED'],
      ],
    );
    assert.match(run.tasks[0].id, /^T\d+$/);
    assert.deepEqual(run.tasks[1].inputs, { input_node: { question: 'why?' } });
    assert.ok(run.end_time && run.duration >= 0);
  });

  it('starts non-blocking: PENDING at once, then COMPLETED when polled', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'Linear async', definition: linear })).body;
    const res = await http.post(`/wf/${wf.id}/start_run/?run_type=non_blocking`, {
      initial_inputs: { input_node: { question: 'q' } },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'PENDING');
    assert.equal(res.body.outputs, null);
    assert.equal(res.body.percentage_complete, 0);
    assert.equal(res.body.workflow_version.version, 1);
    const done = await waitForRun(http, res.body.id);
    assert.equal(done.status, 'COMPLETED');
    assert.deepEqual((await http.get(`/runs/${res.body.id}/status/`)).body.outputs, {
      input_node: { question: 'q' },
      Answer: { answer: 'q' },
    });
  });

  it('round-trips run inputs and outputs with "." and "$" keys, arrays in arrays and unicode', async () => {
    const { http } = engine;
    const odd = { 'a.b': { $set: [[1, [2]], []] }, 'ключ 🚀': 'ß', $where: null };
    const wf = (
      await http.post('/wf/', {
        name: 'Odd inputs',
        definition: {
          nodes: [linear.nodes[0], { id: 'o', node_type: 'OutputNode' }],
          links: [{ source_id: 'input_node', target_id: 'o' }],
        },
      })
    ).body;
    const res = await http.post(`/wf/${wf.id}/run/`, { initial_inputs: { input_node: odd } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.o, { input_node: odd });
    const [run] = (await http.get(`/wf/${wf.id}/runs/`)).body;
    assert.deepEqual(run.initial_inputs, { input_node: odd });
    assert.deepEqual(run.outputs.o, { input_node: odd });
    assert.deepEqual(run.tasks[1].inputs, { input_node: odd });
  });

  it('stores data URIs in run inputs and merges `files` into a blocking run’s inputs (start_run ignores them)', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'With data URIs', definition: linear })).body;
    const png = `data:image/png;base64,${Buffer.from('not really a png').toString('base64')}`;
    const res = await http.post(`/wf/${wf.id}/run/`, {
      initial_inputs: { input_node: { question: 'q', image: png, nested: [{ doc: 'data:text/plain;base64,aGk=' }] } },
      files: { input_node: ['test_files/x/a.txt'], other: ['ignored'] },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const stored = res.body.input_node;
    assert.match(stored.image, new RegExp(`^run_files/${wf.id}/[0-9a-f]{16}\\.png$`));
    assert.match(stored.nested[0].doc, /\.txt$/);
    assert.deepEqual(stored.files, ['test_files/x/a.txt']);
    const [run] = (await http.get(`/wf/${wf.id}/runs/`)).body;
    assert.equal(run.initial_inputs.input_node.image, stored.image);
    assert.equal(await engine.api.mongo.collection('run_files.files').countDocuments({ filename: stored.image }), 1);

    const nonBlocking = await http.post(`/wf/${wf.id}/start_run/`, {
      initial_inputs: { input_node: { question: 'q' } },
      files: { input_node: ['x'] },
    });
    assert.equal(nonBlocking.body.initial_inputs.input_node.files, undefined);
    const bad = await http.post(`/wf/${wf.id}/run/`, {
      initial_inputs: { input_node: { question: 'data:image/png,notbase64' } },
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.detail, /Invalid data URI/);
  });
});
