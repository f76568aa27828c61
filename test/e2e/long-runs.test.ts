import assert from 'node:assert/strict';
import { startEngine, waitForRun, type Engine } from '../support/engine';
import { l, n } from '../support/graphs';
import { runWorkflowId } from '../../src/contracts/workflow-names';

/** in(x) → p1 → p2 → p3 (each appends "!") → gate (a human) → out(y). */
const chain = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('p1', 'PythonFuncNode', { code: 'return {"y": input_model["in"]["x"] + "!"}', output_schema: { y: 'string' } }),
    n('p2', 'PythonFuncNode', { code: 'return {"y": input_model["p1"]["y"] + "!"}', output_schema: { y: 'string' } }),
    n('p3', 'PythonFuncNode', { code: 'return {"y": input_model["p2"]["y"] + "!"}', output_schema: { y: 'string' } }),
    n('gate', 'HumanInterventionNode', { message: 'ok?' }),
    n('out', 'OutputNode', { output_map: { y: 'gate.p3.y' } }),
  ],
  links: [l('in', 'p1'), l('p1', 'p2'), l('p2', 'p3'), l('p3', 'gate'), l('gate', 'out')],
};

describe('e2e: long runs stay inside Temporal history limits', function () {
  this.timeout(180_000);
  let engine: Engine;
  before(async () => {
    // Ten events: every Python node pushes the history past it, so the run continues as new repeatedly.
    engine = await startEngine({ SPUR_RUN_HISTORY_EVENTS: '10' });
  });
  after(() => engine?.close());

  it('continues as new without losing tasks or outputs; pauses and blocking waits follow it', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'long chain', definition: chain })).body;
    const blocking = await http.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x: 'go' } } });
    assert.equal(blocking.status, 200, blocking.text);
    assert.deepEqual(blocking.body.p3, { y: 'go!!!' }, 'a blocking run that pauses answers with the outputs so far');
    const [listed] = (await http.get(`/wf/${wf.id}/runs/`)).body;
    const paused = await waitForRun(http, listed.id, (r) => r.status === 'PAUSED');
    assert.deepEqual(
      paused.tasks.map((t: any) => [t.node_id, t.status]),
      [
        ['in', 'COMPLETED'],
        ['p1', 'COMPLETED'],
        ['p2', 'COMPLETED'],
        ['p3', 'COMPLETED'],
        ['gate', 'PAUSED'],
        ['out', 'PENDING'],
      ],
    );

    const acted = await http.post(`/wf/process_pause_action/${listed.id}/`, {
      action: 'APPROVE',
      user_id: 'u',
      inputs: {},
    });
    assert.equal(acted.status, 200, acted.text);
    const done = await waitForRun(http, listed.id);
    assert.equal(done.status, 'COMPLETED', done.message);
    assert.deepEqual(done.outputs.out, { y: 'go!!!' });
    const task = (id: string) => done.tasks.find((t: any) => t.node_id === id);
    assert.deepEqual(task('p1').inputs, { in: { x: 'go' } });
    assert.deepEqual(task('p2').outputs, { y: 'go!!' });
    assert.ok(
      done.tasks.every((t: any) => t.status === 'COMPLETED' && t.end_time),
      JSON.stringify(done.tasks),
    );
    assert.equal(new Set(done.tasks.map((t: any) => t.id)).size, 6, 'task ids survive');

    const handle = engine.api.temporal.workflow.getHandle(
      runWorkflowId(listed.id, engine.api.config.temporal.workflowIdPrefix),
    );
    const history = await handle.fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    assert.ok(started?.continuedExecutionRunId, 'the last execution continued an earlier one');
    assert.ok((history.events?.length ?? 0) < 200);
  });

  it('refuses a ForLoopNode over the iteration cap when the workflow is saved (422)', async () => {
    const loop = {
      nodes: [n('in', 'InputNode'), n('loop', 'ForLoopNode', { num_iterations: 1001 })],
      links: [l('in', 'loop')],
    };
    const res = await engine.http.post('/wf/', { name: 'too long', definition: loop });
    assert.equal(res.status, 422, res.text);
    assert.deepEqual(res.body.detail[0].loc, ['body', 'definition', 'nodes', 1, 'config', 'num_iterations']);
    assert.match(res.body.detail[0].msg, /num_iterations 1001, over the maximum of 1000/);
  });
});
