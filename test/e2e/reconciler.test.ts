import assert from 'node:assert/strict';
import { reconcilerScheduleId } from '../../temporal/reconciler-schedule';
import { WorkflowType, runWorkflowId } from '../../src/contracts/workflow-names';
import { type Engine, closeReconcilingEngine, startEngine, waitForRun } from '../support/engine';
import { input, l, n, pythonExclaim } from '../support/graphs';
import { runLeftUnstarted } from '../support/half-started-runs';

/** in → gate (a human pause: the run stays open until someone acts) → out. */
const gated = {
  nodes: [input(), n('gate', 'HumanInterventionNode'), n('out', 'OutputNode')],
  links: [l('in', 'gate'), l('gate', 'out')],
};

describe('e2e: the reconciler (a Temporal Schedule) closes or starts runs whose workflow is gone or never started', function () {
  this.timeout(180_000);
  let engine: Engine;
  const graceSeconds = 3;

  before(async () => {
    engine = await startEngine({
      SPUR_RECONCILE_EVERY_SECONDS: '2',
      SPUR_RECONCILE_GRACE_SECONDS: String(graceSeconds),
    });
  });
  after(() => closeReconcilingEngine(engine));

  it('starts a run whose api stopped between inserting it and starting its workflow', async () => {
    const wf = (await engine.http.post('/wf/', { name: 'never started', definition: pythonExclaim })).body;
    // An api process killed (kill -9) while its workflow start was on the way to Temporal.
    const runId = await runLeftUnstarted(engine, wf.id, { src: { x: 'late' } });
    const recorded = (await engine.http.get(`/run/${runId}/`)).body;
    assert.equal(recorded.status, 'PENDING');

    const done = await waitForRun(
      engine.http,
      runId,
      (r) => ['COMPLETED', 'FAILED', 'CANCELED'].includes(r.status),
      90_000,
    );
    assert.equal(done.status, 'COMPLETED', done.message);
    const full = (await engine.http.get(`/run/${runId}/`)).body;
    assert.deepEqual(full.outputs.out, { result: 'late!' });
    assert.equal(full.tasks.length, 3, 'one task per node');
    // It was not started before its grace period was over.
    const started = await engine.api.temporal.workflow
      .getHandle(runWorkflowId(runId, engine.api.env.SPUR_WORKFLOW_ID_PREFIX))
      .describe();
    const insertedAt = (await engine.api.models.Run.findById(runId).lean())?.start_time as Date;
    assert.ok(
      started.startTime.getTime() - insertedAt.getTime() >= graceSeconds * 1000,
      'started only after the grace period',
    );
  });

  it('fails a run whose workflow was terminated, saying why; its open tasks close with it', async () => {
    const wf = (await engine.http.post('/wf/', { name: 'terminated', definition: gated })).body;
    const started = (await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'a' } } })).body;
    await waitForRun(engine.http, started.id, (r) => r.status === 'PAUSED', 60_000);
    await engine.api.temporal.workflow
      .getHandle(runWorkflowId(started.id, engine.api.env.SPUR_WORKFLOW_ID_PREFIX))
      .terminate('an operator pulled the plug');

    const run = await waitForRun(engine.http, started.id, (r) => r.status !== 'PAUSED', 90_000);
    assert.equal(run.status, 'FAILED');
    assert.match(run.message, /terminated/);
    const full = (await engine.http.get(`/run/${started.id}/`)).body;
    assert.equal(full.tasks.find((t: { node_id: string }) => t.node_id === 'gate').status, 'FAILED');
  });

  it('is a Temporal Schedule whose passes show in Temporal as workflows with a tally', async () => {
    const prefix = engine.api.env.SPUR_WORKFLOW_ID_PREFIX as string;
    const schedule = await engine.api.temporal.schedule.getHandle(reconcilerScheduleId(prefix)).describe();
    assert.equal(schedule.action.type, 'startWorkflow');
    const query = `WorkflowType = '${WorkflowType.spurReconcile}' AND TaskQueue = '${engine.api.config.temporal.taskQueue}' AND ExecutionStatus = 'Completed'`;
    let tally: unknown;
    for await (const execution of engine.api.temporal.workflow.list({ query })) {
      tally = await engine.api.temporal.workflow.getHandle(execution.workflowId, execution.runId).result();
      break;
    }
    assert.ok(
      tally && typeof (tally as { checked?: unknown }).checked === 'number',
      `a completed pass with a tally: ${JSON.stringify(tally)}`,
    );
  });
});
