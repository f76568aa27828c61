import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { reconcilerScheduleId } from '../../temporal/reconciler-schedule';
import { WorkflowType, runWorkflowId } from '../../src/contracts/workflow-names';
import { type Engine, closeReconcilingEngine, startEngine, waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { input, l, n } from '../support/graphs';
import { batchLeftUnstarted, runActionLeftUnstarted } from '../support/half-started-runs';
import { runActionWorkflowId } from '../../src/contracts/run-action-contract';
import { quietRuntime } from '../support/quiet-runtime';

/** in → gate (a human pause: the run stays open until someone acts) → out. */
const gated = {
  nodes: [input(), n('gate', 'HumanInterventionNode'), n('out', 'OutputNode')],
  links: [l('in', 'gate'), l('gate', 'out')],
};
const ENDING_WORKFLOWS = path.join(__dirname, '..', 'fixtures', 'ending-workflows', 'ending-run.ts');
const GRACE_MS = 3000;
/** Runs a reconciler page looks at (temporal/reconciler-schedule.ts). */
const PAGE_SIZE = 100;

describe('e2e: the reconciler closes runs whose workflow timed out, failed, was cancelled or is gone, starts batches and bulk actions never started, and pages', function () {
  this.timeout(300_000);
  let engine: Engine;

  before(async () => {
    quietRuntime();
    engine = await startEngine({
      SPUR_RECONCILE_EVERY_SECONDS: '2',
      SPUR_RECONCILE_GRACE_SECONDS: String(GRACE_MS / 1000),
    });
  });
  after(() => closeReconcilingEngine(engine));

  const workflowIdOf = (runId: string) => runWorkflowId(runId, engine.api.env.SPUR_WORKFLOW_ID_PREFIX);
  const closed = (runId: string) =>
    waitForRun(engine.http, runId, (r) => !['PENDING', 'RUNNING', 'PAUSED'].includes(r.status), 120_000);
  async function pausedRuns(count: number): Promise<string[]> {
    const wf = (await engine.http.post('/wf/', { name: `gated-${Math.random()}`, definition: gated })).body;
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push((await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: i } } })).body.id);
    for (const id of ids) await waitForRun(engine.http, id, (r) => r.status === 'PAUSED', 60_000);
    return ids;
  }
  const taskOf = async (runId: string, node: string) =>
    ((await engine.http.get(`/run/${runId}/`)).body.tasks as { node_id: string; status: string }[]).find(
      (t) => t.node_id === node,
    );

  it('fails a paused run whose workflow timed out, saying so; its open task closes with it', async () => {
    const [runId] = (await pausedRuns(1)) as [string];
    // What an operator's start under the run's workflow id with a deadline leaves: the latest
    // execution times out on the server (nothing polls its queue).
    await engine.api.temporal.workflow.start(WorkflowType.spurRun, {
      workflowId: workflowIdOf(runId),
      taskQueue: `nobody-${randomBytes(4).toString('hex')}`,
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      workflowExecutionTimeout: '1s',
      args: [],
    });
    const run = await closed(runId);
    assert.equal(run.status, 'FAILED');
    assert.match(run.message, /timed out/);
    assert.equal((await taskOf(runId, 'gate'))?.status, 'FAILED');
  });

  /** A worker on a queue of its own running `ending-run.ts` under a run's workflow id (replacing the run's own). */
  async function endingWorkflowOf(runId: string, how: 'fail' | 'wait') {
    const taskQueue = `ending-${randomBytes(4).toString('hex')}`;
    const connection = await NativeConnection.connect({ address: engine.api.config.temporal.address });
    const worker = await Worker.create({
      connection,
      namespace: engine.api.config.temporal.namespace,
      taskQueue,
      workflowsPath: ENDING_WORKFLOWS,
    });
    const running = worker.run();
    const handle = await engine.api.temporal.workflow.start(WorkflowType.spurRun, {
      workflowId: workflowIdOf(runId),
      taskQueue,
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      args: [how],
    });
    return {
      handle,
      async stop() {
        worker.shutdown();
        await running;
        await connection.close();
      },
    };
  }

  it('fails a paused run whose workflow failed without recording it, saying so; its open task closes with it', async () => {
    const [runId] = (await pausedRuns(1)) as [string];
    const ending = await endingWorkflowOf(runId, 'fail');
    try {
      await assert.rejects(ending.handle.result(), /Workflow execution failed/);
      const run = await closed(runId);
      assert.equal(run.status, 'FAILED');
      assert.match(run.message, /Its Temporal workflow failed without recording why/);
      assert.equal((await taskOf(runId, 'gate'))?.status, 'FAILED');
    } finally {
      await ending.stop();
    }
  });

  it('cancels a paused run whose workflow was cancelled outside Spur; its open task is cancelled with it', async () => {
    const [runId] = (await pausedRuns(1)) as [string];
    const ending = await endingWorkflowOf(runId, 'wait');
    try {
      await ending.handle.cancel();
      await assert.rejects(ending.handle.result(), /cancel/i);
      const run = await closed(runId);
      assert.equal(run.status, 'CANCELED');
      assert.equal((await taskOf(runId, 'gate'))?.status, 'CANCELED');
    } finally {
      await ending.stop();
    }
  });

  it('fails a paused run whose workflow no longer exists (deleted from Temporal), once it is still missing a grace period after a pass first found it so', async () => {
    const [runId] = (await pausedRuns(1)) as [string];
    // Past the grace period already: the next pass looks at it.
    const started = Date.parse((await engine.http.get(`/run/${runId}/`)).body.start_time);
    await new Promise((r) => setTimeout(r, Math.max(0, started + GRACE_MS + 500 - Date.now())));
    // Temporal deletes a running workflow in two steps, terminating it first: a pass in between
    // rightly says "terminated". The reconciler's schedule is paused (no pass running) until the
    // workflow is gone, so the passes after see only what this test is about.
    const reconciler = engine.api.temporal.schedule.getHandle(
      reconcilerScheduleId(engine.api.env.SPUR_WORKFLOW_ID_PREFIX as string),
    );
    await reconciler.pause('a workflow is being deleted');
    await until(
      'no reconciler pass running',
      async () => (await reconciler.describe()).info.runningActions.length === 0,
      30_000,
    );
    const deletedAt = Date.now();
    await engine.api.temporal.workflowService.deleteWorkflowExecution({
      namespace: engine.api.config.temporal.namespace,
      workflowExecution: { workflowId: workflowIdOf(runId) },
    });
    const handle = engine.api.temporal.workflow.getHandle(workflowIdOf(runId));
    await until(
      'the workflow deleted',
      () =>
        handle.describe().then(
          () => false,
          (err: unknown) => err instanceof WorkflowNotFoundError,
        ),
      30_000,
    );
    await reconciler.unpause();
    const run = await closed(runId);
    assert.equal(run.status, 'FAILED');
    assert.match(run.message, /no longer exists/);
    assert.equal((await taskOf(runId, 'gate'))?.status, 'FAILED');
    // The pass right after the delete (at most 2 s later) only records it; one "not found" may come
    // from a server recovering its database.
    const waited = Date.parse(run.end_time) - deletedAt;
    assert.ok(waited >= GRACE_MS, `failed ${waited} ms after the delete, within the grace period`);
  });

  it('starts a batch whose api was killed before its workflow started: every row runs, as the request asked', async () => {
    const wf = (
      await engine.http.post('/wf/', {
        name: 'batch never started',
        definition: {
          nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })],
          links: [l('in', 'out')],
        },
      })
    ).body;
    const fd = new FormData();
    fd.append('file', new Blob(['x\n1\n2\n'], { type: 'text/csv' }), 'rows.csv');
    const ds = await engine.http.post('/ds/?name=never-started', fd);
    assert.equal(ds.status, 200, ds.text);
    const parentId = await batchLeftUnstarted(engine, wf.id, ds.body.id);
    assert.equal((await engine.http.get(`/run/${parentId}/status/`)).body.status, 'PENDING');
    const run = await closed(parentId);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run));
    const rows = (await engine.http.get(`/wf/${wf.id}/runs/?page_size=100`)).body.filter(
      (r: { parent_run_id: string | null }) => r.parent_run_id === parentId,
    );
    assert.deepEqual(rows.map((r: { status: string }) => r.status).sort(), ['COMPLETED', 'COMPLETED']);
    const file = await engine.http.get(`/of/${run.output_file_id}/download/`);
    assert.equal(file.status, 200);
    const lines = file.text
      .trim()
      .split('\n')
      .map((line: string) => JSON.parse(line) as { out: { x: unknown } });
    assert.deepEqual(
      lines.map((line) => String(line.out.x)),
      ['1', '2'],
      file.text,
    );
  });

  /** Every matched run of a bulk action, as GET /runs/actions/{id}/ lists them. */
  const actionOf = async (id: string) => (await engine.http.get(`/runs/actions/${id}/?page_size=100`)).body;
  const workflowOfRun = async (runId: string) => (await engine.http.get(`/run/${runId}/`)).body.workflow_id as string;

  it('starts a bulk cancel whose api was killed after storing it and its matches, before its workflow started: each run is cancelled, once', async () => {
    const ids = await pausedRuns(3);
    const filter = { workflow_id: await workflowOfRun(ids[0]!), status: ['PAUSED'] };
    const id = await runActionLeftUnstarted(engine, { filter, action: 'cancel' }, 'stored');
    await until('the action completed', async () => (await actionOf(id)).status === 'COMPLETED', 120_000);
    const action = await actionOf(id);
    assert.equal(action.matched, 3);
    assert.equal(action.done, 3);
    assert.deepEqual(
      action.results.map((r: { run_id: string; outcome: string }) => [r.run_id, r.outcome]).sort(),
      [...ids].sort().map((runId) => [runId, 'canceled']),
    );
    for (const runId of ids) {
      assert.equal((await engine.http.get(`/run/${runId}/status/`)).body.status, 'CANCELED', runId);
      // Once: Temporal holds one cancel request in the run's history.
      const history = await engine.api.temporal.workflow.getHandle(workflowIdOf(runId)).fetchHistory();
      const cancels = (history.events ?? []).filter((e) => e.workflowExecutionCancelRequestedEventAttributes);
      assert.equal(cancels.length, 1, runId);
    }
  });

  it('ends FAILED, acting on nothing, a bulk cancel whose api was killed while storing its matches', async () => {
    const ids = await pausedRuns(2);
    const filter = { workflow_id: await workflowOfRun(ids[0]!), status: ['PAUSED'] };
    const id = await runActionLeftUnstarted(engine, { filter, action: 'cancel' }, 'cut');
    await until('the action ended', async () => (await actionOf(id)).status !== 'RUNNING', 120_000);
    const action = await actionOf(id);
    assert.equal(action.status, 'FAILED');
    assert.equal(action.done, 0);
    assert.ok(
      action.results.every((r: { outcome: string }) => r.outcome === 'pending'),
      JSON.stringify(action.results),
    );
    // Nothing started it, and its runs were not touched.
    const handle = engine.api.temporal.workflow.getHandle(
      runActionWorkflowId(id, engine.api.env.SPUR_WORKFLOW_ID_PREFIX),
    );
    await assert.rejects(handle.describe(), WorkflowNotFoundError);
    for (const runId of ids)
      assert.equal((await engine.http.get(`/run/${runId}/status/`)).body.status, 'PAUSED', runId);
  });

  it(`pages: a run past the first ${PAGE_SIZE} open runs is reconciled too, and a pass's tally counts them all`, async () => {
    const ids = await pausedRuns(PAGE_SIZE + 5);
    // Pages go by `_id` (string order); the last run of the last page is the one to close.
    const last = [...ids].sort().at(-1) as string;
    await engine.api.temporal.workflow.getHandle(workflowIdOf(last)).terminate('an operator pulled the plug');
    const run = await closed(last);
    assert.equal(run.status, 'FAILED');
    assert.match(run.message, /terminated/);
    // Every other run stays paused: alive workflows are left alone.
    for (const id of ids.filter((i) => i !== last))
      assert.equal((await engine.http.get(`/run/${id}/status/`)).body.status, 'PAUSED', id);
    const query = `WorkflowType = '${WorkflowType.spurReconcile}' AND TaskQueue = '${engine.api.config.temporal.taskQueue}' AND ExecutionStatus = 'Completed'`;
    let checked = 0;
    await until(
      // A pass skips runs younger than the grace period: an early pass may see fewer, a later one all.
      `a completed pass that checked all ${PAGE_SIZE + 4} paused runs, more than one page`,
      async () => {
        for await (const execution of engine.api.temporal.workflow.list({ query })) {
          const tally = (await engine.api.temporal.workflow
            .getHandle(execution.workflowId, execution.runId)
            .result()) as { checked: number };
          checked = Math.max(checked, tally.checked);
        }
        return checked >= PAGE_SIZE + 4;
      },
      120_000,
    );
    assert.ok(checked >= PAGE_SIZE + 4, `a pass checked ${checked} runs`);
  });
});
