import assert from 'node:assert/strict';
import { startSplitEngine, waitForRun, type SplitEngine } from '../support/engine';
import { l, n } from '../support/graphs';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { batchRowRunId } from '../../src/contracts/batch-contract';

const echo = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('out', 'OutputNode', { output_map: { y: 'in.x' } }),
  ],
  links: [l('in', 'out')],
};

describe('e2e: bulk work runs on a task queue of its own, served by the worker process', function () {
  this.timeout(120_000);
  let engine: SplitEngine;
  let queueOf: (runId: string) => Promise<string>;
  let mainQueue: string;

  before(async () => {
    // Child mode: every row a workflow of its own, so each row's queue shows in Temporal.
    engine = await startSplitEngine({ SPUR_BATCH_ROW_MODE: 'child' });
    mainQueue = engine.api.env.SPUR_TASK_QUEUE as string;
    const prefix = engine.api.env.SPUR_WORKFLOW_ID_PREFIX as string;
    // The oracle is Temporal's own description of each workflow.
    queueOf = async (runId) =>
      (await engine.api.temporal.workflow.getHandle(runWorkflowId(runId, prefix)).describe()).taskQueue;
  });
  after(() => engine?.close());

  it("a batch and its rows run on '<queue>-bulk' and complete; a blocking run stays on the main queue", async () => {
    const wf = await engine.http.post('/wf/', { name: 'bulk echo', definition: echo });
    assert.equal(wf.status, 200, wf.text);
    const csv = ['x', 'one', 'two', 'three'].join('\n');
    const fd = new FormData();
    fd.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
    const ds = await engine.http.post('/ds/?name=bulk-rows', fd);
    assert.equal(ds.status, 200, ds.text);

    const batch = await engine.http.post(`/wf/${wf.body.id}/start_batch_run/`, {
      dataset_id: ds.body.id,
      mini_batch_size: 2,
    });
    assert.equal(batch.status, 200, batch.text);
    const ended = await waitForRun(engine.http, batch.body.id);
    assert.equal(ended.status, 'COMPLETED', JSON.stringify(ended));
    const lines = await engine.http.get(`/of/${batch.body.output_file_id}/download/`);
    assert.equal(lines.status, 200, lines.text);
    assert.deepEqual(
      lines.text
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { out?: { y?: string } }).out?.y),
      ['one', 'two', 'three'],
    );
    assert.equal(await queueOf(batch.body.id), `${mainQueue}-bulk`);
    for (const row of [0, 1, 2]) assert.equal(await queueOf(batchRowRunId(batch.body.id, row)), `${mainQueue}-bulk`);

    const ran = await engine.http.post(`/wf/${wf.body.id}/run/`, { initial_inputs: { in: { x: 'now' } } });
    assert.equal(ran.status, 200, ran.text);
    const runs = await engine.http.get(`/wf/${wf.body.id}/runs/`);
    const blocking = (runs.body as { id: string; run_type: string; parent_run_id: string | null }[]).find(
      (r) => r.parent_run_id === null && r.id !== batch.body.id,
    );
    assert.ok(blocking, JSON.stringify(runs.body));
    assert.equal(await queueOf(blocking.id), mainQueue);
  });
});
