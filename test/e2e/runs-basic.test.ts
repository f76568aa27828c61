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

  it('runv2 answers the run as PySpur does: 200 with it when completed, 202 with it in detail at a pause, 500 with it in detail when it failed', async () => {
    const { http } = engine;
    const done = (await http.post('/wf/', { name: 'v2 linear', definition: linear })).body;
    const ok = await http.post(`/wf/${done.id}/runv2/`, { initial_inputs: { input_node: { question: 'v2?' } } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(
      [ok.body.status, ok.body.message, ok.body.outputs, ok.body.workflow_id],
      [
        'COMPLETED',
        'Workflow execution completed successfully.',
        { input_node: { question: 'v2?' }, Answer: { answer: 'v2?' } },
        done.id,
      ],
    );
    assert.equal((await http.get(`/run/${ok.body.id}/status/`)).body.status, 'COMPLETED');

    const gated = (
      await http.post('/wf/', {
        name: 'v2 gated',
        definition: {
          nodes: [
            linear.nodes[0],
            { id: 'gate', title: 'gate', node_type: 'HumanInterventionNode', config: {} },
            {
              id: 'out',
              title: 'Answer',
              node_type: 'OutputNode',
              config: { output_map: { answer: 'input_node.question' } },
            },
          ],
          links: [
            { source_id: 'input_node', target_id: 'gate' },
            { source_id: 'gate', target_id: 'out' },
          ],
        },
      })
    ).body;
    const paused = await http.post(`/wf/${gated.id}/runv2/`, { initial_inputs: { input_node: { question: 'p' } } });
    assert.equal(paused.status, 202, JSON.stringify(paused.body));
    assert.deepEqual(
      [paused.body.detail.status, paused.body.detail.message],
      ['PAUSED', 'Workflow execution paused for human intervention.'],
    );
    assert.ok(
      paused.body.detail.tasks.some(
        (t: { node_id: string; status: string }) => t.node_id === 'gate' && t.status === 'PAUSED',
      ),
    );

    const failing = (
      await http.post('/wf/', {
        name: 'v2 failing',
        definition: {
          nodes: [
            linear.nodes[0],
            {
              id: 'py',
              title: 'py',
              node_type: 'PythonFuncNode',
              config: { code: 'raise ValueError("v2 boom")', output_schema: { y: 'string' } },
            },
          ],
          links: [{ source_id: 'input_node', target_id: 'py' }],
        },
      })
    ).body;
    const failed = await http.post(`/wf/${failing.id}/runv2/`, { initial_inputs: { input_node: { question: 'f' } } });
    assert.equal(failed.status, 500, JSON.stringify(failed.body));
    assert.equal(failed.body.detail.status, 'FAILED');
    assert.match(failed.body.detail.message, /^Workflow execution failed: .*v2 boom/);

    // A client's mistakes are not run: 404 for an unknown workflow, 400 for inputs it does not take.
    assert.equal((await http.post('/wf/S999999/runv2/', { initial_inputs: {} })).status, 404);
    const before = (await http.get(`/wf/${done.id}/runs/`)).body.length;
    const wrong = await http.post(`/wf/${done.id}/runv2/`, { initial_inputs: { nope: { x: 1 } } });
    assert.ok([400, 422].includes(wrong.status), JSON.stringify(wrong.body));
    assert.equal((await http.get(`/wf/${done.id}/runs/`)).body.length, before, 'no run recorded');
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

  it("a task's end_time is never before its start_time, each read from the node's own clock (ten runs)", async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'Linear times', definition: linear })).body;
    for (let i = 0; i < 10; i++) {
      const res = await http.post(`/wf/${wf.id}/run/`, { initial_inputs: { input_node: { question: `q${i}` } } });
      assert.equal(res.status, 200, res.text);
      const [run] = (await http.get(`/wf/${wf.id}/runs/?page_size=1`)).body;
      for (const t of (await http.get(`/run/${run.id}/`)).body.tasks as Array<Record<string, string | null>>)
        if (t.start_time && t.end_time)
          assert.ok(
            Date.parse(t.end_time) >= Date.parse(t.start_time),
            `${t.node_id}: ${t.start_time} → ${t.end_time}`,
          );
    }
  });

  it('GET /run/ filters by workflow, status, what started the runs and a start-time window; a bad filter is 422', async () => {
    const { http } = engine;
    const a = (await http.post('/wf/', { name: 'Filter A', definition: linear })).body;
    const b = (await http.post('/wf/', { name: 'Filter B', definition: linear })).body;
    const before = new Date(Date.now() - 1000).toISOString();
    for (const wf of [a, a, b])
      await http.post(`/wf/${wf.id}/run/`, { initial_inputs: { input_node: { question: 'q' } } });
    const ids = async (q: string) =>
      ((await http.get(`/run/?page_size=100&${q}`)).body as Array<{ workflow_id: string }>).map((r) => r.workflow_id);
    assert.deepEqual(await ids(`workflow_id=${a.id}`), [a.id, a.id]);
    assert.deepEqual(await ids(`workflow_id=${b.id}&status=COMPLETED&trigger=client&start_date=${before}`), [b.id]);
    assert.deepEqual(await ids(`workflow_id=${b.id}&status=FAILED`), []);
    assert.deepEqual(await ids(`workflow_id=${b.id}&trigger=schedule`), []);
    assert.deepEqual(await ids(`workflow_id=${b.id}&end_date=${before}`), []);
    for (const bad of ['status=DONE', 'trigger=cron', 'start_date=yesterday', 'workflow_id='])
      assert.equal((await http.get(`/run/?${bad}`)).status, 422, bad);
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
