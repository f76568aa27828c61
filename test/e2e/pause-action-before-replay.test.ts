import assert from 'node:assert/strict';
import { temporal } from '@temporalio/proto';
import { startApi, type TestApi } from '../support/api';
import { waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { gatedByHuman } from '../support/graphs';
import { client } from '../support/http';
import { type TcpRelay, startTcpRelay } from '../support/tcp-relay';
import { startWorker, type TestWorker } from '../support/worker';

// A worker killed after its workflow task recorded a pause but before Temporal heard the task was
// done: the run shows PAUSED, and the next worker must replay up to the pause again. A decision sent
// meanwhile reaches that worker with the retried task, before the replay has reached the pause.

describe('e2e: a pause action that arrives before the pause is replayed', function () {
  this.timeout(180_000);
  let api: TestApi | undefined;
  let relay: TcpRelay | undefined;
  const workers: TestWorker[] = [];
  after(async () => {
    for (const w of workers) await w.stop();
    await relay?.close();
    await api?.close();
  });

  it('is applied, not refused: the run shows PAUSED, so the decision waits for the replay and the run completes', async () => {
    // Long enough for the lost worker's task to time out (10 s) and the next worker to take it.
    api = await startApi({ SPUR_PAUSE_ACTION_WAIT_SECONDS: '90' });
    const http = client(api.baseUrl);
    const [host, port] = api.env.SPUR_TEMPORAL_ADDRESS!.split(':') as [string, string];
    relay = await startTcpRelay({ host, port: Number(port) });
    const lost = await startWorker({ ...api.env, SPUR_TEMPORAL_ADDRESS: relay.address });
    workers.push(lost);
    // Once Temporal has its poll for workflow tasks, Temporal's answers still reach it but nothing it
    // sends gets through: the task it takes (the run reaching the pause and recording it) is never
    // reported done.
    const { namespace, taskQueue } = api.config.temporal;
    await until('the worker polling for workflow tasks', async () => {
      const queue = await api!.temporal.workflowService.describeTaskQueue({
        namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      return (queue.pollers ?? []).length > 0;
    });
    relay.hold();

    const wf = (await http.post('/wf/', { name: 'gated', definition: gatedByHuman })).body;
    const started = await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'a' } } });
    assert.equal(started.status, 200, started.text);
    const runId: string = started.body.id;
    await waitForRun(http, runId, (r) => r.status === 'PAUSED', 60_000);
    lost.process.kill('SIGKILL');

    const decision = http.post(`/wf/process_pause_action/${runId}/`, {
      action: 'APPROVE',
      user_id: 'ops',
      comments: 'after the crash',
      inputs: { note: 'approved' },
    });
    workers.push(await startWorker(api.env));
    const answer = await decision;
    assert.equal(answer.status, 200, answer.text);
    const run = await waitForRun(http, runId, undefined, 60_000);
    assert.equal(run.status, 'COMPLETED', JSON.stringify(run).slice(0, 500));
    const pauses = (await http.get(`/wf/pause_history/${runId}/`)).body as Array<Record<string, unknown>>;
    assert.deepEqual(
      pauses.map((p) => [p.resume_action, p.resume_user_id, p.comments]),
      [['APPROVE', 'ops', 'after the crash']],
    );
  });
});
