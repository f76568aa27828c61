import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startEngine, type Engine } from '../support/engine';
import { l, n } from '../support/graphs';

/** Over SPUR_VALUE_REF_BYTES (128 KiB by default): a value that travels by reference. */
const SIZE = 600_000;

/**
 * in(x) → m (merge) → py (returns x as it got it) → out(a = py.x, b = m.in.x, c = in.x): the same
 * large value through four nodes and three output fields.
 */
const definition = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('m', 'MergeNode'),
    n('py', 'PythonFuncNode', { code: 'return {"x": input_model["m"]["in"]["x"]}', output_schema: { x: 'string' } }),
    n('out', 'OutputNode', { output_map: { a: 'py.x', b: 'm.in.x', c: 'in.x' } }),
  ],
  links: [l('in', 'm'), l('m', 'py'), l('py', 'out'), l('m', 'out'), l('in', 'out')],
};

describe('e2e: a large value passed through several nodes is stored once', function () {
  this.timeout(180_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(() => engine?.close());

  it('keeps one copy in the GridFS bucket `values` for the run, however many nodes and fields carry it', async () => {
    const { http } = engine;
    const x = randomBytes(SIZE / 2).toString('hex');
    const wf = (await http.post('/wf/', { name: 'stored once', definition })).body;
    const res = await http.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x } } });
    assert.equal(res.status, 200, res.text.slice(0, 500));
    assert.ok(res.body.out.a === x && res.body.out.b === x && res.body.out.c === x, 'every field carries the value');
    const [run] = (await http.get(`/wf/${wf.id}/runs/`)).body;
    assert.equal(run.status, 'COMPLETED');
    const files = await engine.api.mongo.db!.collection('values.files').find({ 'metadata.scope': run.id }).toArray();
    const copies = files.filter((f) => (f.length as number) >= SIZE);
    assert.equal(copies.length, 1, `files of the run: ${JSON.stringify(files.map((f) => [f._id, f.length]))}`);
    // Nothing else holds it either (an object wrapping it would be a second, larger file).
    assert.ok(
      files.reduce((sum, f) => sum + (f.length as number), 0) < 1.5 * SIZE,
      `bytes stored: ${files.map((f) => f.length).join(' + ')}`,
    );
  });
});
