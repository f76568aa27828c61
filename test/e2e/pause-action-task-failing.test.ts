import assert from 'node:assert/strict';
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { startApi, type TestApi } from '../support/api';
import { isFinal, waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { gatedByHuman } from '../support/graphs';
import { client } from '../support/http';
import { quietRuntime } from '../support/quiet-runtime';
import { startWorker, type TestWorker } from '../support/worker';

const FAILING_WORKFLOWS = path.join(__dirname, '..', 'fixtures', 'failing-workflows', 'failing-run.ts');

describe("e2e: a pause action while the run's workflow task is failing", function () {
  this.timeout(120_000);
  let api: TestApi | undefined;
  let worker: TestWorker | undefined;
  let failing: { stop(): Promise<void> } | undefined;

  before(() => quietRuntime());
  after(async () => {
    await failing?.stop();
    await worker?.stop();
    await api?.close();
  });

  /** A worker on the run's task queue whose every workflow task fails. */
  async function startFailingWorker(a: TestApi) {
    const connection = await NativeConnection.connect({ address: a.config.temporal.address });
    const w = await Worker.create({
      connection,
      namespace: a.config.temporal.namespace,
      taskQueue: a.config.temporal.taskQueue,
      workflowsPath: FAILING_WORKFLOWS,
    });
    const running = w.run();
    return {
      async stop() {
        w.shutdown();
        await running;
        await connection.close();
      },
    };
  }

  it('is accepted (202, not 500) and applied once a worker completes the task: the run ends with it', async () => {
    api = await startApi();
    worker = await startWorker(api.env);
    const http = client(api.baseUrl);
    const wf = (await http.post('/wf/', { name: 'failing task', definition: gatedByHuman })).body;
    const started = (await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'f' } } })).body;
    await waitForRun(http, started.id, (r) => r.status === 'PAUSED');
    await worker.stop();
    worker = undefined;

    // Only the failing worker polls now; a signal gives it a workflow task to fail.
    failing = await startFailingWorker(api);
    const handle = api.temporal.workflow.getHandle(runWorkflowId(started.id, api.env.SPUR_WORKFLOW_ID_PREFIX));
    await handle.signal('spurTestNudge');
    // Temporal refuses Updates from the third attempt of a failing task on.
    await until(
      "the run's workflow task failing, third attempt",
      async () => ((await handle.describe()).raw.pendingWorkflowTask?.attempt ?? 0) >= 3,
    );

    const res = await http.post(`/wf/process_pause_action/${started.id}/`, {
      action: 'APPROVE',
      user_id: 'reviewer',
      inputs: { ok: true },
      comments: 'while failing',
    });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.status, 'PAUSED');
    const [waiting] = (await http.get(`/wf/pause_history/${started.id}/`)).body;
    assert.equal(waiting.resume_time, null, 'not applied while no task completes');

    await failing.stop();
    failing = undefined;
    worker = await startWorker(api.env);
    const done = await waitForRun(http, started.id, isFinal, 60_000);
    assert.equal(done.status, 'COMPLETED', done.message);
    assert.deepEqual(done.outputs.out, { gate: { ok: true, in: { x: 'f' } } });
    const [resolved] = (await http.get(`/wf/pause_history/${started.id}/`)).body;
    assert.equal(resolved.resume_user_id, 'reviewer');
    assert.equal(resolved.resume_action, 'APPROVE');
  });
});
