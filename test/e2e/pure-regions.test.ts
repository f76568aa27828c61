import assert from 'node:assert/strict';
import { startEngine, type Engine } from '../support/engine';
import { cond, input, l, n } from '../support/graphs';
import { runGraph } from '../support/run-graph';
import { localActivityTypes } from '../support/run-history';

describe('e2e: a chain of pure nodes runs as one local activity (pure region)', function () {
  this.timeout(60_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(() => engine?.close());

  const run = (definition: unknown, inputs: Record<string, unknown>) => runGraph(engine, definition, inputs, 'region');

  const chain = {
    nodes: [
      input(),
      n('S', 'StaticValueNode', { values: { greeting: 'hi' } }),
      n('M', 'MergeNode'),
      n('R', 'RouterNode', {
        route_map: {
          yes: { conditions: [cond('M.in.x', 'equals', 'go')] },
          no: { conditions: [cond('M.in.x', 'equals', 'stop')] },
        },
      }),
      n('out', 'OutputNode', { output_map: { said: 'R.M.S.greeting', x: 'R.M.in.x' } }),
      n('other', 'OutputNode'),
    ],
    links: [l('in', 'S'), l('in', 'M'), l('S', 'M'), l('M', 'R'), l('R', 'out', 'yes'), l('R', 'other', 'no')],
  };

  it("runs five pure nodes in one step, every node still showing its own task, and that step saves the run's end", async () => {
    const { outputs, record, tasks } = await run(chain, { x: 'go' });
    assert.deepEqual(outputs.out, { said: 'hi', x: 'go' });
    assert.deepEqual(outputs.M, { in: { x: 'go' }, S: { greeting: 'hi' } });
    assert.equal(record.status, 'COMPLETED');
    // Each node's task has the inputs it was given and what it produced, in the order they ran.
    assert.deepEqual(tasks.M.inputs, { in: { x: 'go' }, S: { greeting: 'hi' } });
    assert.deepEqual(tasks.R.outputs, { yes: { M: outputs.M }, no: null });
    assert.deepEqual(tasks.out.inputs, { R: { M: outputs.M } });
    assert.deepEqual(tasks.out.outputs, { said: 'hi', x: 'go' });
    assert.equal(tasks.other.status, 'CANCELED', 'the untaken route is cancelled inside the region too');
    assert.equal(tasks.other.error, null);
    for (const id of ['S', 'M', 'R', 'out']) {
      assert.equal(tasks[id].status, 'COMPLETED', id);
      assert.ok(tasks[id].start_time <= tasks[id].end_time, `${id}: ${tasks[id].start_time} .. ${tasks[id].end_time}`);
    }
    assert.ok(
      tasks.S.end_time <= tasks.M.start_time && tasks.M.end_time <= tasks.R.start_time,
      'the chain ran in order',
    );
    // One local activity ran every node and, the region being all the run had left, saved its end
    // (an untaken route's task CANCELED ends nothing in failure: the run is COMPLETED).
    assert.equal(record.status, 'COMPLETED');
    assert.deepEqual(await localActivityTypes(engine, record.id), ['executePureRegion']);
  });

  it('a node failing inside the region fails alone: what depends on it is cancelled, the other branch completes', async () => {
    const def = {
      nodes: [
        input(),
        n('S', 'StaticValueNode', { values: { v: 1 } }),
        n('bad', 'OutputNode', { output_map: { y: 'S.missing.deep' } }),
        n('after', 'MergeNode'),
        n('good', 'OutputNode', { output_map: { v: 'S.v' } }),
      ],
      links: [l('in', 'S'), l('S', 'bad'), l('bad', 'after'), l('S', 'good')],
    };
    const { outputs, record, tasks } = await run(def, { x: 'go' });
    assert.deepEqual(outputs.good, { v: 1 });
    assert.equal(tasks.bad.status, 'FAILED');
    assert.match(tasks.bad.error, /S\.missing\.deep/);
    assert.deepEqual(tasks.bad.inputs, { S: { v: 1 } });
    assert.equal(tasks.after.status, 'CANCELED');
    assert.equal(tasks.after.error, 'Upstream failure');
    assert.equal(record.status, 'FAILED');
    assert.match(record.message, /^Node 'bad' \(bad\) failed: /);
    // The failure is saved as soon as the region's step has ended (the run shows FAILED), then the end.
    assert.deepEqual(await localActivityTypes(engine, record.id), [
      'executePureRegion',
      'saveProgress',
      'saveProgress',
    ]);
  });

  it("a PythonFuncNode's regular activity (timeout over 60 s) runs the pure nodes after it that read only its answer: their tasks are their own, no step of theirs is in the history", async () => {
    const def = {
      nodes: [
        input(),
        n('py', 'PythonFuncNode', {
          code: 'return {"y": input_model["in"]["x"] * 2}',
          output_schema: { y: 'string' },
          timeout_seconds: 120,
        }),
        n('R', 'RouterNode', {
          route_map: {
            big: { conditions: [cond('py.y', 'equals', 'gogo')] },
            small: { conditions: [cond('py.y', 'equals', 'no')] },
          },
        }),
        n('out', 'OutputNode', { output_map: { y: 'R.py.y' } }),
        n('other', 'OutputNode'),
      ],
      links: [l('in', 'py'), l('py', 'R'), l('R', 'out', 'big'), l('R', 'other', 'small')],
    };
    const { outputs, record, tasks } = await run(def, { x: 'go' });
    assert.equal(record.status, 'COMPLETED', record.message);
    assert.deepEqual(outputs.out, { y: 'gogo' });
    assert.deepEqual(tasks.R.inputs, { py: { y: 'gogo' } });
    assert.deepEqual(tasks.out.inputs, { R: { py: { y: 'gogo' } } });
    assert.equal(tasks.other.status, 'CANCELED');
    assert.ok(tasks.py.end_time <= tasks.R.start_time, 'the router ran once the Python node had ended');
    // The save that shows the Python node RUNNING, then the final one: R, out and other ran in its activity.
    assert.deepEqual(await localActivityTypes(engine, record.id), ['saveProgress', 'saveProgress']);
  });

  const readsTwo = (pyConfig: Record<string, unknown>) => ({
    nodes: [
      input(),
      n('py', 'PythonFuncNode', { code: 'return {"y": "done"}', output_schema: { y: 'string' }, ...pyConfig }),
      n('out', 'OutputNode', { output_map: { y: 'py.y', x: 'in.x' } }),
    ],
    links: [l('in', 'py'), l('py', 'out'), l('in', 'out')],
  });

  it("a pure node after a PythonFuncNode's regular activity that also reads another node runs as its own step (its input is not copied into the history)", async () => {
    const { outputs, record } = await run(readsTwo({ timeout_seconds: 120 }), { x: 'go' });
    assert.deepEqual(outputs.out, { y: 'done', x: 'go' });
    assert.deepEqual(await localActivityTypes(engine, record.id), [
      'saveProgress',
      'executeOutputNode',
      'saveProgress',
    ]);
  });

  it("a short PythonFuncNode's local activity carries the save that shows it RUNNING, runs the pure node after it, which also reads another node (a local activity's input is not kept in the history), and writes the run's final save", async () => {
    const { outputs, record, tasks } = await run(readsTwo({}), { x: 'go' });
    assert.deepEqual(outputs.out, { y: 'done', x: 'go' });
    assert.deepEqual(tasks.out.inputs, { py: { y: 'done' }, in: { x: 'go' } });
    assert.equal(record.status, 'COMPLETED');
    assert.deepEqual(await localActivityTypes(engine, record.id), ['executePythonFuncNode']);
  });

  it('a partial run computes its target through a region', async () => {
    const wf = (await engine.http.post('/wf/', { name: `region-partial-${Math.random()}`, definition: chain })).body;
    const res = await engine.http.post(`/wf/${wf.id}/run_partial/`, {
      node_id: 'R',
      initial_inputs: { in: { x: 'stop' } },
      partial_outputs: {},
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.R, { yes: null, no: { M: { in: { x: 'stop' }, S: { greeting: 'hi' } } } });
    assert.equal('out' in res.body, false, 'nothing past the target runs');
  });
});
