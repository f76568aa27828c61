import assert from 'node:assert/strict';
import { startSplitEngine, waitForRun, type SplitEngine } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { startWorker } from '../support/worker';

/** The child: in(x) → gate (a human pause) → out(echoed = the x it passed through). */
const gatedChild = {
  nodes: [
    input(),
    n('gate', 'HumanInterventionNode', { message: 'Approve the child' }),
    n('out', 'OutputNode', { output_map: { echoed: 'gate.in.x' } }),
  ],
  links: [l('in', 'gate'), l('gate', 'out')],
};

const parentOf = (childId: string) => ({
  nodes: [
    n('in', 'InputNode', { output_schema: { y: 'string' } }),
    n('sub', 'SubworkflowNode', { workflow_id: childId, input_map: { x: 'in.y' } }),
    n('out', 'OutputNode', { output_map: { got: 'sub.echoed' } }),
  ],
  links: [l('in', 'sub'), l('sub', 'out')],
});

describe('e2e: SubworkflowNode across a worker kill', function () {
  this.timeout(300_000);
  let engine: SplitEngine;
  before(async () => {
    engine = await startSplitEngine();
  });
  after(() => engine?.close());

  it('a worker killed (kill -9) while the child runs: the parent still completes once, with one child run', async () => {
    const { http } = engine;
    const child = (await http.post('/wf/', { name: 'durable-child', definition: gatedChild })).body;
    const parent = (await http.post('/wf/', { name: 'durable-parent', definition: parentOf(child.id) })).body;
    const started = await http.post(`/wf/${parent.id}/start_run/`, { initial_inputs: { in: { y: 'kept' } } });
    assert.equal(started.status, 200, started.text);
    let childRunId: string | undefined;
    for (const deadline = Date.now() + 120_000; !childRunId && Date.now() < deadline;) {
      childRunId = ((await http.get(`/wf/${child.id}/runs/`)).body as Array<{ id: string }>)[0]?.id;
      if (!childRunId) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(childRunId, 'the child run was recorded');
    await waitForRun(http, childRunId, (r) => r.status === 'PAUSED', 120_000);

    engine.worker.process.kill('SIGKILL');
    engine.worker = await startWorker(engine.api.env);

    const approved = await http.post(`/wf/process_pause_action/${childRunId}/`, {
      action: 'APPROVE',
      user_id: 'alice',
      inputs: {},
    });
    assert.ok([200, 202].includes(approved.status), approved.text);
    const done = (await waitForRun(http, started.body.id, undefined, 180_000)) as Record<string, any>;
    assert.equal(done.status, 'COMPLETED', done.message);
    assert.deepEqual(done.outputs.out, { got: 'kept' });
    const childRuns = (await http.get(`/wf/${child.id}/runs/`)).body as Array<{ id: string; status: string }>;
    assert.deepEqual(
      childRuns.map((r) => [r.id, r.status]),
      [[childRunId, 'COMPLETED']],
    );
    const parentRuns = (await http.get(`/wf/${parent.id}/runs/`)).body as unknown[];
    assert.equal(parentRuns.length, 1, 'one parent run');
  });
});
