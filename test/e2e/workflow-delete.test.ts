import assert from 'node:assert/strict';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { startEngine, startSplitEngine, type Engine, type SplitEngine } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { eventually, pidsWith, processTokens, tokenedWait } from '../support/python-runs';
import { until } from '../support/exec-log';
import { startWorker } from '../support/worker';
import { bearer, memberWithKey } from '../support/access';
import { client } from '../support/http';

/** in → gate (a person's approval) → after; in → py (waits two minutes in a child process carrying `token`). */
function pausedAndBusy(token: string) {
  return {
    nodes: [
      input(),
      n('gate', 'HumanInterventionNode', { message: 'Check' }),
      n('after', 'OutputNode'),
      n('py', 'PythonFuncNode', { code: `${tokenedWait(token, 120)}\nreturn {"done": True}`, output_schema: {} }),
    ],
    links: [l('in', 'gate'), l('gate', 'after'), l('in', 'py')],
  };
}

/** in → gate (a person's approval) → after. */
const gated = {
  nodes: [input(), n('gate', 'HumanInterventionNode', { message: 'Check' }), n('after', 'OutputNode')],
  links: [l('in', 'gate'), l('gate', 'after')],
};

/** Every record a run leaves in MongoDB, counted by kind. */
async function recordsOf(engine: Engine, runId: string): Promise<Record<string, number>> {
  const { Run, RunEvent, RunTasks, Pause, NodeAttempt } = engine.api.models;
  return {
    run: await Run.countDocuments({ _id: runId }),
    events: await RunEvent.countDocuments({ run_id: runId }),
    tasks: await RunTasks.countDocuments({ _id: runId }),
    pauses: await Pause.countDocuments({ run_id: runId }),
    attempts: await NodeAttempt.countDocuments({ run_id: runId }),
  };
}
const NOTHING = { run: 0, events: 0, tasks: 0, pauses: 0, attempts: 0 };

async function temporalStatus(engine: Engine, runId: string): Promise<string | undefined> {
  const id = runWorkflowId(runId, engine.api.config.temporal.workflowIdPrefix);
  return (await engine.api.temporal.workflow.getHandle(id).describe()).status.name;
}

async function startPaused(engine: Engine, definition: object): Promise<{ workflowId: string; runId: string }> {
  const wf = await engine.http.post('/wf/', { name: `delete-${Math.random()}`, definition });
  assert.equal(wf.status, 200, wf.text);
  const run = await engine.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'v' } } });
  assert.equal(run.status, 200, run.text);
  const runId = run.body.id as string;
  await until('the run to pause', async () => (await engine.api.models.Pause.countDocuments({ run_id: runId })) > 0);
  return { workflowId: wf.body.id as string, runId };
}

describe('e2e: deleting a workflow stops its open runs first', function () {
  this.timeout(180_000);
  const tokens = processTokens('wf-delete');
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(async () => {
    tokens.killAll();
    await engine?.close();
  });

  it('a run paused for a person with a Python node running beside it is cancelled: its workflow is closed when the delete answers, its Python ends, and nothing of the run is left', async () => {
    const token = tokens.next();
    const { workflowId, runId } = await startPaused(engine, pausedAndBusy(token));
    await eventually('the Python node to be running', () => (pidsWith(token).length > 0 ? true : undefined));

    const deleted = await engine.http.delete(`/wf/${workflowId}/`);
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal(await temporalStatus(engine, runId), 'CANCELLED', 'the run was cancelled, not left running');
    await eventually('the Python node to end', () => (pidsWith(token).length === 0 ? true : undefined), 3000);
    assert.deepEqual(await recordsOf(engine, runId), NOTHING);
    assert.equal((await engine.http.get(`/run/${runId}/`)).status, 404);
    assert.equal((await engine.http.get(`/wf/${workflowId}/`)).status, 404);
  });

  it("another workspace's DELETE of the workflow is 404 and stops nothing: the run stays paused and its workflow open", async () => {
    const { workflowId, runId } = await startPaused(engine, gated);
    const made = await engine.http.post('/access/workspaces/', { name: `delete-other-${Math.random()}` });
    assert.equal(made.status, 201, made.text);
    const other = client(
      engine.api.baseUrl,
      bearer((await memberWithKey(engine.http, made.body.id, `other-admin-${Math.random()}`, 'admin')).key.key),
    );
    const refused = await other.delete(`/wf/${workflowId}/`);
    assert.equal(refused.status, 404, refused.text);
    assert.equal((await engine.http.get(`/run/${runId}/`)).body.status, 'PAUSED');
    assert.equal(await temporalStatus(engine, runId), 'RUNNING', 'no cancel was asked');
    assert.equal(await engine.api.models.RunCancelRequest.countDocuments({ _id: runId }), 0, 'no cancel mark');
    assert.equal((await engine.http.delete(`/wf/${workflowId}/`)).status, 204);
  });
});

describe('e2e: deleting a workflow whose open run cannot stop', function () {
  this.timeout(240_000);
  let engine: SplitEngine;
  before(async () => {
    engine = await startSplitEngine();
  });
  after(() => engine?.close());

  it('answers 409 after its wait with the workflow and the run kept, and deletes both once a worker has let the run stop', async () => {
    const { workflowId, runId } = await startPaused(engine, gated);
    // No worker: the run's workflow cannot take its cancel.
    await engine.worker.stop();

    const refused = await engine.http.delete(`/wf/${workflowId}/`);
    assert.equal(refused.status, 409, refused.text);
    assert.match(refused.body.detail, new RegExp(`1 run\\(s\\) still stopping after their cancel \\(${runId}\\)`));
    assert.equal((await engine.http.get(`/wf/${workflowId}/`)).status, 200, 'the workflow is kept');
    const kept = await engine.http.get(`/run/${runId}/`);
    assert.equal(kept.status, 200);
    assert.equal(kept.body.status, 'PAUSED');
    assert.equal(await temporalStatus(engine, runId), 'RUNNING');

    engine.worker = await startWorker(engine.api.env);
    const deleted = await engine.http.delete(`/wf/${workflowId}/`);
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal(await temporalStatus(engine, runId), 'CANCELLED');
    assert.deepEqual(await recordsOf(engine, runId), NOTHING);
    assert.equal((await engine.http.get(`/wf/${workflowId}/`)).status, 404);
  });
});
