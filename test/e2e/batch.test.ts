import assert from 'node:assert/strict';
import { isFinal, startEngine, startSplitEngine, waitForRun, type Engine, type SplitEngine } from '../support/engine';
import { l, n } from '../support/graphs';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { until } from '../support/exec-log';
import { startWorker } from '../support/worker';

type Http = Engine['http'];

/** A dataset of `rows` rows (columns x, k) uploaded as CSV; x is the row number as text. */
async function uploadDataset(http: Http, name: string, rows: number, cell: (i: number) => string = (i) => String(i)) {
  const csv = ['x,k', ...Array.from({ length: rows }, (_, i) => `${cell(i)},${i % 3}`)].join('\n');
  const fd = new FormData();
  fd.append('file', new Blob([csv], { type: 'text/csv' }), `${name}.csv`);
  const res = await http.post(`/ds/?name=${encodeURIComponent(name)}`, fd);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { id: string };
}

/** in(x) → py (optionally slow, fails when x == "bad") → out; py reports when it ran. */
function pythonDefinition(sleepSeconds: number, extra: Record<string, unknown> = {}) {
  const code = [
    'import time',
    'start = time.time()',
    `time.sleep(${sleepSeconds})`,
    'x = input_model["in"]["x"]',
    'if x == "bad":',
    '    raise ValueError("row says bad")',
    'return {"y": "row-" + x, "start": start, "end": time.time()}',
  ].join('\n');
  return {
    nodes: [
      n('in', 'InputNode', { output_schema: { x: 'string' } }),
      n('py', 'PythonFuncNode', { code, output_schema: { y: 'string', start: 'float', end: 'float' }, ...extra }),
      n('out', 'OutputNode', { output_map: { y: 'py.y' } }),
    ],
    links: [l('in', 'py'), l('py', 'out')],
  };
}

/** A slow Python batch over `rows` rows, two at a time, returned once some rows have ended. */
async function batchUnderWay(http: Http, name: string, rows: number, sleepSeconds: number) {
  const wf = (await http.post('/wf/', { name, definition: pythonDefinition(sleepSeconds) })).body;
  const ds = await uploadDataset(http, name, rows);
  const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 2 })).body;
  await waitForRun(http, parent.id, (r: any) => r.percentage_complete > 0, 60_000);
  return { wf, parent };
}

/** in → gate (a human approves each row) → out. */
const humanDefinition = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('gate', 'HumanInterventionNode', { message: 'ok?' }),
    n('out', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
  ],
  links: [l('in', 'gate'), l('gate', 'out')],
};

const pureDefinition = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('out', 'OutputNode', { output_map: { answer: 'in.x' } }),
  ],
  links: [l('in', 'out')],
};

async function download(http: Http, outputFileId: string): Promise<Array<Record<string, any>>> {
  const res = await http.get(`/of/${outputFileId}/download/`);
  assert.equal(res.status, 200);
  return res.text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

/** Every run of the batch's rows, via the public list (paged, children included). */
async function rowRuns(http: Http, workflowId: string, parentRunId: string) {
  const all: Array<Record<string, any>> = [];
  for (let page = 1; ; page++) {
    const res = await http.get(`/wf/${workflowId}/runs/?page=${page}&page_size=100`);
    assert.equal(res.status, 200);
    all.push(...res.body);
    if (res.body.length < 100) break;
  }
  return all.filter((r) => r.parent_run_id === parentRunId);
}

/** Most rows whose [start, end) intervals overlap at one instant. */
function maxOverlap(intervals: Array<[number, number]>): number {
  const events = intervals
    .flatMap(
      ([s, e]) =>
        [
          [s, 1],
          [e, -1],
        ] as const,
    )
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, (now += d));
  return max;
}

/** Approves every paused row of a batch until `rows` were approved; never more than `window` paused at once. */
async function approveRows(http: Http, parentRunId: string, rows: number, window: number) {
  const approved = new Set<string>();
  const deadline = Date.now() + 90_000;
  while (approved.size < rows) {
    assert.ok(Date.now() < deadline, `only ${approved.size} rows approved`);
    const paused = (await http.get('/wf/paused_workflows/?page_size=100')).body.filter(
      (p: any) => p.run.parent_run_id === parentRunId,
    );
    assert.ok(paused.length <= window, `${paused.length} rows paused at once`);
    const status = (await http.get(`/run/${parentRunId}/status/`)).body;
    if (paused.length > 0) assert.equal(status.status, 'RUNNING', 'the parent waits for its paused rows');
    for (const p of paused) {
      const res = await http.post(`/wf/process_pause_action/${p.run.id}/`, {
        action: 'APPROVE',
        user_id: 'tester',
        inputs: {},
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      approved.add(p.run.id);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('e2e: batch runs over datasets', function () {
  this.timeout(180_000);
  // A worker process of its own: one test kills it mid-batch.
  let engine: SplitEngine;
  before(async () => {
    // Chunks of 500 rows (default 2000): the 1 500-row batch below crosses chunks.
    engine = await startSplitEngine({ SPUR_BATCH_CHUNK_ROWS: '500' });
  });
  after(() => engine?.close());

  it('checks workflow, dataset, columns and mini_batch_size before creating anything', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'batch checks', definition: pureDefinition })).body;
    const ds = await uploadDataset(http, 'batch-checks', 3);
    const before = (await http.get('/run/?page_size=100')).body.length;

    const unknownWf = await http.post('/wf/S999999/start_batch_run/', { dataset_id: ds.id });
    assert.deepEqual([unknownWf.status, unknownWf.body], [404, { detail: 'Workflow not found' }]);
    const unknownDs = await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: 'DS999999' });
    assert.deepEqual([unknownDs.status, unknownDs.body], [404, { detail: 'Dataset not found' }]);
    const wantsY = (
      await http.post('/wf/', {
        name: 'batch wants y',
        definition: {
          ...pureDefinition,
          nodes: [n('in', 'InputNode', { output_schema: { y: 'string' } }), pureDefinition.nodes[1]],
        },
      })
    ).body;
    const missing = await http.post(`/wf/${wantsY.id}/start_batch_run/`, { dataset_id: ds.id });
    assert.deepEqual(
      [missing.status, missing.body],
      [400, { detail: "Input field 'y' in input schema not found in the dataset" }],
    );
    const zero = await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 0 });
    assert.equal(zero.status, 422);
    assert.deepEqual(zero.body.detail[0].loc, ['body', 'mini_batch_size']);
    const noDataset = await http.post(`/wf/${wf.id}/start_batch_run/`, { mini_batch_size: 2 });
    assert.equal(noDataset.status, 422);

    assert.equal(
      (await http.get('/run/?page_size=100')).body.length,
      before,
      'no run was created by a refused request',
    );
  });

  it('runs 100 rows 7 at a time: progress while running, one child run per row, JSONL lines in dataset order', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'batch 100', definition: pythonDefinition(0.05) })).body;
    const ds = await uploadDataset(http, 'batch-100', 100);
    const res = await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 7 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const parent = res.body;
    assert.equal(parent.run_type, 'batch');
    assert.equal(parent.parent_run_id, null);
    assert.equal(parent.input_dataset_id, ds.id);
    assert.match(parent.output_file_id, /^OF\d+$/);
    assert.deepEqual(parent.initial_inputs, {});
    assert.ok(['PENDING', 'RUNNING'].includes(parent.status));

    // Progress is visible while the rows run.
    const seen = new Set<number>();
    const done = await waitForRun(
      http,
      parent.id,
      (r: any) => {
        seen.add(r.percentage_complete);
        return isFinal(r);
      },
      150_000,
    );
    assert.equal(done.status, 'COMPLETED', done.message);
    assert.equal(done.percentage_complete, 100);
    assert.ok(
      [...seen].some((p) => p > 0 && p < 100),
      `no intermediate progress among ${[...seen].join(', ')}`,
    );

    const lines = await download(http, parent.output_file_id);
    assert.equal(lines.length, 100);
    lines.forEach((line, i) => assert.deepEqual(line.out, { y: `row-${i}` }, `line ${i}`));

    // At most 7 rows ran at once, and the window slid (more than one at a time).
    const overlap = maxOverlap(lines.map((line) => [line.py.start, line.py.end]));
    assert.ok(overlap <= 7 && overlap >= 2, `max rows in flight ${overlap}`);

    const children = await rowRuns(http, wf.id, parent.id);
    assert.equal(children.length, 100);
    const third = (await http.get(`/run/${parent.id}-3/`)).body;
    assert.equal(third.status, 'COMPLETED');
    assert.equal(third.run_type, 'batch');
    assert.equal(third.input_dataset_id, ds.id);
    assert.deepEqual(third.initial_inputs, { in: { x: '2' } });
    assert.deepEqual(third.outputs.out, { y: 'row-2' });
    assert.deepEqual(
      third.tasks.map((t: any) => [t.node_id, t.status]),
      [
        ['in', 'COMPLETED'],
        ['py', 'COMPLETED'],
        ['out', 'COMPLETED'],
      ],
    );
    assert.equal(new Set(third.tasks.map((t: any) => t.id)).size, 3);
    // A row's record leaves out the fields it has no value for: they answer null, as any run's do.
    assert.deepEqual(Object.keys(third).sort(), Object.keys(parent).sort());
    assert.deepEqual(
      [third.output_file_id, third.message, third.rerun_of, third.rerun_from_node_id, third.parent_run_id],
      [null, null, null, null, parent.id],
    );
    assert.equal(third.workflow_version_id, parent.workflow_version_id);

    // Only the parent lists by default; the dataset's runs are its batch: the parent, not its 100 rows.
    const parents = (await http.get('/run/?run_type=batch&page_size=100')).body;
    assert.ok(parents.some((r: any) => r.id === parent.id));
    assert.ok(parents.every((r: any) => r.parent_run_id === null));
    const dsRuns = (await http.get(`/ds/${ds.id}/list_runs/`)).body;
    assert.deepEqual(
      dsRuns.map((r: any) => r.id),
      [parent.id],
    );
  });

  it('a failing row gets an error line, the others finish, the parent ends FAILED with the counts', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'batch with a bad row', definition: pythonDefinition(0) })).body;
    const ds = await uploadDataset(http, 'batch-bad', 12, (i) => (i === 4 ? 'bad' : String(i)));
    const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 3 })).body;
    const done = await waitForRun(http, parent.id, isFinal, 60_000);
    assert.equal(done.status, 'FAILED');
    assert.equal(
      done.message,
      '11 rows completed, 1 failed',
      JSON.stringify((await http.get(`/run/${parent.id}-1/`)).body),
    );
    assert.equal(done.percentage_complete, 100);
    const lines = await download(http, parent.output_file_id);
    assert.equal(lines.length, 12);
    assert.equal(lines[4].run_id, `${parent.id}-5`);
    assert.match(lines[4].error, /row says bad/);
    assert.deepEqual(lines[5].out, { y: 'row-5' });
    const failedRow = (await http.get(`/run/${parent.id}-5/`)).body;
    assert.equal(failedRow.status, 'FAILED');
    assert.equal(failedRow.tasks.find((t: any) => t.node_id === 'py').status, 'FAILED');
    assert.equal(failedRow.tasks.find((t: any) => t.node_id === 'out').error, 'Upstream failure');
  });

  it('runs 1 500 pure rows across chunks, in order', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'batch pure', definition: pureDefinition })).body;
    const ds = await uploadDataset(http, 'batch-pure', 1500);
    const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 50 })).body;
    const done = await waitForRun(http, parent.id, isFinal, 120_000);
    assert.equal(done.status, 'COMPLETED', done.message);
    const lines = await download(http, parent.output_file_id);
    assert.deepEqual(
      lines.map((line) => line.out.answer),
      Array.from({ length: 1500 }, (_, i) => String(i)),
    );
  });

  it('cancel mid-batch stops the rows: parent CANCELED, no row left open, no new rows after', async () => {
    const { http } = engine;
    // 200 rows of 0.3 s, two at a time: 30 s of rows, so a cancel that a loaded machine takes
    // seconds to deliver still lands mid-batch.
    const { wf, parent } = await batchUnderWay(http, 'batch-cancel', 200, 0.3);
    const res = await http.post(`/wf/cancel_workflow/${parent.id}/`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const done = await waitForRun(http, parent.id, isFinal, 60_000);
    assert.equal(done.status, 'CANCELED');
    const children = await rowRuns(http, wf.id, parent.id);
    assert.ok(children.length < 200, `${children.length} rows ran`);
    assert.ok(
      children.every((c) => isFinal(c as { status: string })),
      'every row run ended',
    );
    const lines = await download(http, parent.output_file_id);
    assert.ok(lines.length < 200);
    lines.forEach((line, i) => assert.deepEqual(line.out, { y: `row-${i}` }));
    // The batch's workflow waits for its chunk's cancel to complete before it closes: once closed,
    // nothing can start a row any more, so the count is final now.
    const workflow = engine.api.temporal.workflow.getHandle(
      runWorkflowId(parent.id, engine.api.config.temporal.workflowIdPrefix),
    );
    await until('the batch workflow to close', async () => (await workflow.describe()).status.name !== 'RUNNING');
    assert.equal((await rowRuns(http, wf.id, parent.id)).length, children.length, 'no row started after the cancel');
  });

  it('a worker killed mid-batch: a new worker finishes it, no row lost or written twice', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'batch crash', definition: pythonDefinition(0.05) })).body;
    const ds = await uploadDataset(http, 'batch-crash', 120);
    const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 4 })).body;
    await waitForRun(http, parent.id, (r: any) => r.percentage_complete >= 15, 60_000);
    engine.worker.process.kill('SIGKILL');
    await engine.worker.process.exited;
    engine.worker = await startWorker(engine.api.env);
    const done = await waitForRun(http, parent.id, isFinal, 120_000);
    assert.equal(done.status, 'COMPLETED', done.message);
    const lines = await download(http, parent.output_file_id);
    assert.deepEqual(
      lines.map((line) => line.out.y),
      Array.from({ length: 120 }, (_, i) => `row-${i}`),
    );
    const children = await rowRuns(http, wf.id, parent.id);
    assert.equal(new Set(children.map((c) => c.id)).size, 120);
    assert.ok(children.every((c) => c.status === 'COMPLETED'));
  });

  it('a chunk whose worker froze past its heartbeat timeout: the retry re-runs the rows the first attempt cancelled', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'batch frozen', definition: pythonDefinition(1) })).body;
    const ds = await uploadDataset(http, 'batch-frozen', 16);
    const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 4 })).body;
    await waitForRun(http, parent.id, (r: any) => r.percentage_complete > 0, 60_000);
    // Frozen longer than the chunk's heartbeat timeout (10 s): Temporal gives the chunk to a new
    // attempt, and the first one, thawed, has its next heartbeat refused and cancels the rows it ran.
    engine.worker.process.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 14_000));
    engine.worker.process.kill('SIGCONT');
    const done = await waitForRun(http, parent.id, isFinal, 120_000);
    assert.equal(done.status, 'COMPLETED', done.message);
    const lines = await download(http, parent.output_file_id);
    assert.deepEqual(
      lines.map((line) => line.out?.y ?? line.error),
      Array.from({ length: 16 }, (_, i) => `row-${i}`),
    );
    const children = await rowRuns(http, wf.id, parent.id);
    assert.deepEqual(
      children.filter((c) => c.status !== 'COMPLETED').map((c) => `${c.id} ${c.status}`),
      [],
    );
    assert.equal(children.length, 16);
  });

  it('rows that pause run as child workflows: paused rows are listed and keep the parent waiting', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'batch with a human', definition: humanDefinition })).body;
    const ds = await uploadDataset(http, 'batch-human', 5);
    const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 2 })).body;

    await approveRows(http, parent.id, 5, 2);
    const done = await waitForRun(http, parent.id, isFinal, 60_000);
    const lines = await download(http, parent.output_file_id);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(lines));
    assert.deepEqual(
      lines.map((line) => line.out.x),
      ['0', '1', '2', '3', '4'],
    );
  });

  it('an output file deleted while the batch runs fails the batch with a message, instead of retrying forever', async () => {
    const { http } = engine;
    // 20 mini batches of 0.5 s: rows are still to come when the delete lands, even when a loaded
    // machine sees the first progress late (at 0.2 s a run of the full suite once saw it finish first).
    const { parent } = await batchUnderWay(http, 'batch-loses-file', 40, 0.5);
    assert.equal((await http.delete(`/of/${parent.output_file_id}/`)).status, 200);
    const done = await waitForRun(http, parent.id, isFinal, 60_000);
    assert.equal(done.status, 'FAILED');
    assert.match(done.message, /^Batch failed: .*deleted while the batch ran/);
  });

  it('deleting the output file keeps the batch runs and clears the parent link', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'batch delete of', definition: pureDefinition })).body;
    const ds = await uploadDataset(http, 'batch-of-delete', 3);
    const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id })).body;
    await waitForRun(http, parent.id, isFinal, 60_000);
    assert.equal((await http.delete(`/of/${parent.output_file_id}/`)).status, 200);
    assert.equal((await http.get(`/of/${parent.output_file_id}/`)).status, 404);
    const after = (await http.get(`/run/${parent.id}/`)).body;
    assert.equal(after.output_file_id, null);
    assert.equal(after.status, 'COMPLETED');
    assert.equal((await http.get(`/run/${parent.id}-1/`)).status, 200);
  });
});

describe('e2e: batch runs that continue as new', function () {
  this.timeout(180_000);
  let engine: Engine;
  before(async () => {
    // A tiny history limit: the batch workflow continues as new after (nearly) every step, and
    // chunks of 500 rows.
    engine = await startEngine({ SPUR_BATCH_HISTORY_EVENTS: '10', SPUR_BATCH_CHUNK_ROWS: '500' });
  });
  after(() => engine?.close());

  it('inline: 1 200 rows over three chunks, continuing as new between them; lines and counts carried over', async () => {
    const { http } = engine;
    // Row 700's x has no `deep`: its OutputNode fails, the others pass x.deep on.
    const definition = {
      nodes: [
        n('in', 'InputNode', { output_schema: { x: 'string' } }),
        n('out', 'OutputNode', { output_map: { deep: 'in.x.deep' } }),
      ],
      links: [l('in', 'out')],
    };
    const wf = (await http.post('/wf/', { name: 'batch continued', definition })).body;
    const jsonl = Array.from({ length: 1200 }, (_, i) => JSON.stringify({ x: i === 700 ? 'flat' : { deep: i } })).join(
      '\n',
    );
    const fd = new FormData();
    fd.append('file', new Blob([jsonl]), 'continued.jsonl');
    const ds = (await http.post('/ds/?name=batch-continued', fd)).body;
    const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 20 })).body;
    const done = await waitForRun(http, parent.id, isFinal, 150_000);
    assert.equal(done.status, 'FAILED');
    assert.equal(done.message, '1199 rows completed, 1 failed');
    const lines = await download(http, parent.output_file_id);
    assert.equal(lines.length, 1200);
    lines.forEach((line, i) =>
      i === 700 ? assert.match(line.error, /in\.x\.deep/) : assert.deepEqual(line.out, { deep: i }, `line ${i}`),
    );
  });

  it('child mode: rows that pause, across continue-as-new, all recorded once and in order', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'batch human continued', definition: humanDefinition })).body;
    const ds = await uploadDataset(http, 'batch-human-continued', 6);
    const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 2 })).body;
    await approveRows(http, parent.id, 6, 2);
    const done = await waitForRun(http, parent.id, isFinal, 60_000);
    assert.equal(done.status, 'COMPLETED', done.message);
    const lines = await download(http, parent.output_file_id);
    assert.deepEqual(
      lines.map((line) => line.out.x),
      ['0', '1', '2', '3', '4', '5'],
    );
    assert.equal((await rowRuns(http, wf.id, parent.id)).length, 6);
  });
});

describe('e2e: batch rows as child workflows (SPUR_BATCH_ROW_MODE=child)', function () {
  this.timeout(180_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine({ SPUR_BATCH_ROW_MODE: 'child' });
  });
  after(() => engine?.close());

  it('runs every row as its own workflow: same records and lines as inline', async () => {
    const { http } = engine;
    const wf = (await http.post('/wf/', { name: 'batch child mode', definition: pythonDefinition(0) })).body;
    const ds = await uploadDataset(http, 'batch-child-mode', 9, (i) => (i === 2 ? 'bad' : String(i)));
    const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 3 })).body;
    const done = await waitForRun(http, parent.id, isFinal, 90_000);
    assert.equal(done.status, 'FAILED');
    assert.equal(done.message, '8 rows completed, 1 failed');
    const lines = await download(http, parent.output_file_id);
    assert.equal(lines.length, 9);
    lines.forEach((line, i) =>
      i === 2
        ? assert.equal(line.run_id, `${parent.id}-3`)
        : assert.deepEqual(line.out, { y: `row-${i}` }, `line ${i}`),
    );
    const row = (await http.get(`/run/${parent.id}-4/`)).body;
    assert.equal(row.status, 'COMPLETED');
    assert.equal(row.parent_run_id, parent.id);
    assert.deepEqual(
      row.tasks.map((t: any) => t.status),
      ['COMPLETED', 'COMPLETED', 'COMPLETED'],
    );
  });

  it('cancel reaches the row workflows in flight: they end CANCELED, no row is left open', async () => {
    const { http } = engine;
    // A regular activity (heartbeats asked): a short call, a local activity, holds its row's workflow
    // task, so a cancel would reach the row only once the call had ended (docs/performance.md).
    const definition = pythonDefinition(2, { heartbeat_timeout_seconds: 20 });
    const wf = (await http.post('/wf/', { name: 'batch child cancel', definition })).body;
    const ds = await uploadDataset(http, 'batch-child-cancel', 20);
    const parent = (await http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 2 })).body;
    // Two rows running (their python sleeps 2 s): cancel the batch now.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const rows = await rowRuns(http, wf.id, parent.id);
      if (rows.filter((r) => r.status === 'RUNNING').length === 2) break;
      assert.ok(Date.now() < deadline, 'no two rows running');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await http.post(`/wf/cancel_workflow/${parent.id}/`)).status, 200);
    assert.equal((await waitForRun(http, parent.id, isFinal, 60_000)).status, 'CANCELED');
    const rowsDeadline = Date.now() + 30_000;
    let rows = await rowRuns(http, wf.id, parent.id);
    while (rows.some((r) => !isFinal(r as { status: string })) && Date.now() < rowsDeadline) {
      await new Promise((r) => setTimeout(r, 200));
      rows = await rowRuns(http, wf.id, parent.id);
    }
    const statuses = JSON.stringify(rows.map((r) => [r.id, r.status]));
    assert.ok(
      rows.some((r) => r.status === 'CANCELED'),
      statuses,
    );
    assert.ok(
      rows.every((r) => isFinal(r as { status: string })),
      statuses,
    );
    assert.ok(rows.length < 20, `rows never started are not runs: ${statuses}`);
  });
});
