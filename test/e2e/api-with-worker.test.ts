import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { setTimeout } from 'node:timers/promises';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { startApi, type TestApi } from '../support/api';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { waitForRun } from '../support/engine';
import { input, l, n, pythonExclaim } from '../support/graphs';
import { eventually } from '../support/python-runs';
import { openSse } from '../support/sse';
import { stack } from '../support/stack';

const gatedDefinition = {
  nodes: [input(), n('gate', 'HumanInterventionNode', { message: 'Check' }), n('after', 'OutputNode')],
  links: [l('in', 'gate'), l('gate', 'after')],
};

describe('e2e: single-process topology — the api hosting a worker (src/processes/combined.ts)', function () {
  this.timeout(120_000);
  let api: TestApi; // only for its fresh database, task queue and Temporal client: no worker polls this queue but the process under test
  let combined: ApiProcess;
  before(async () => {
    api = await startApi();
    combined = await startApiProcess(
      { ...api.env, SPUR_WORKFLOW_BUNDLE: stack.workflowBundle },
      'src/processes/combined.ts',
    );
  });
  after(async () => {
    await combined?.process.stop();
    await api?.close();
  });

  it('answers a blocking run with its outputs; every workflow task and activity ran in the api process', async () => {
    const { http } = combined;
    // A regular activity (heartbeats asked), so the run has a workflow task after the eager one.
    const definition = {
      ...pythonExclaim,
      nodes: pythonExclaim.nodes.map((node) =>
        node.node_type === 'PythonFuncNode'
          ? { ...node, config: { ...node.config, heartbeat_timeout_seconds: 20 } }
          : node,
      ),
    };
    const wf = (await http.post('/wf/', { name: 'combined python', definition })).body;
    const res = await http.post(`/wf/${wf.id}/run/`, { initial_inputs: { src: { x: 'hi' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.out, { result: 'hi!' });

    const runs = (await http.get(`/wf/${wf.id}/runs/`)).body;
    assert.equal(runs.length, 1);
    assert.equal(runs[0].status, 'COMPLETED');
    // The answer came from the run's final save: the workflow's completion may still be on its way.
    const handle = api.temporal.workflow.getHandle(runWorkflowId(runs[0].id, api.config.temporal.workflowIdPrefix));
    await handle.result();
    const history = await handle.fetchHistory();
    const identities = new Set<string>();
    for (const e of history.events ?? []) {
      const identity =
        e.workflowTaskCompletedEventAttributes?.identity ?? e.activityTaskStartedEventAttributes?.identity;
      if (identity) identities.add(identity);
    }
    assert.deepEqual([...identities], [`${combined.process.pid}@${os.hostname()}`]);
    // Eager start: the server recorded the first workflow task as started inside the start request,
    // so the event lacks what a polling worker reports with every poll (its build id).
    const firstTask = history.events?.find(
      (e) => e.workflowTaskStartedEventAttributes,
    )?.workflowTaskStartedEventAttributes;
    assert.ok(firstTask, 'the run has a workflow task');
    assert.equal(firstTask.workerVersion, null, 'the first workflow task was handed over eagerly, not polled');
    const polled = history.events?.filter((e) => e.workflowTaskStartedEventAttributes).slice(1) ?? [];
    assert.ok(
      polled.length > 0 && polled.every((e) => e.workflowTaskStartedEventAttributes?.workerVersion?.buildId),
      'later tasks were polled',
    );
  });

  it('answers a blocking run once its final record is saved: the record shows the answer; a FAILED run answers too', async () => {
    const { http } = combined;
    const chain = {
      nodes: [
        input(),
        n('s', 'StaticValueNode', { values: { k: 'v' } }),
        n('m', 'MergeNode'),
        n('out', 'OutputNode', { output_map: { k: 'm.s.k', x: 'm.in.x' } }),
      ],
      links: [l('in', 's'), l('in', 'm'), l('s', 'm'), l('m', 'out')],
    };
    const wf = (await http.post('/wf/', { name: 'combined chain', definition: chain })).body;
    for (let i = 0; i < 5; i++) {
      const res = await http.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x: `r${i}` } } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.out, { k: 'v', x: `r${i}` });
      // The answer came from (or after) the final save: the record says the same, at once.
      const [record] = (await http.get(`/wf/${wf.id}/runs/?page_size=1`)).body;
      assert.equal(record.status, 'COMPLETED');
      assert.deepEqual(record.outputs.out, res.body.out);
    }
    const failing = {
      ...chain,
      nodes: chain.nodes.map((node) =>
        node.id === 'out' ? n('out', 'OutputNode', { output_map: { k: 'm.nothing.here' } }) : node,
      ),
    };
    const bad = (await http.post('/wf/', { name: 'combined failing', definition: failing })).body;
    const res = await http.post(`/wf/${bad.id}/run/`, { initial_inputs: { in: { x: 'f' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.m, { in: { x: 'f' }, s: { k: 'v' } });
    assert.equal('out' in res.body, false);
    const [record] = (await http.get(`/wf/${bad.id}/runs/?page_size=1`)).body;
    assert.equal(record.status, 'FAILED');
  });

  it('answers a blocking run cancelled mid-node with its outputs so far (no final save to answer from: Temporal tells)', async () => {
    const { http } = combined;
    const slow = {
      nodes: [
        input(),
        n('py', 'PythonFuncNode', {
          code: 'import time\ntime.sleep(30)\nreturn {"y": 1}',
          output_schema: { y: 'integer' },
        }),
        n('out', 'OutputNode'),
      ],
      links: [l('in', 'py'), l('py', 'out')],
    };
    const wf = (await http.post('/wf/', { name: 'combined cancel', definition: slow })).body;
    const answer = http.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x: 'c' } } });
    const runId = await eventually(
      'the run to be recorded',
      async () => (await http.get(`/wf/${wf.id}/runs/?page_size=1`)).body[0]?.id as string | undefined,
    );
    await waitForRun(http, runId, (r) => r.status === 'RUNNING');
    assert.equal((await http.post(`/wf/cancel_workflow/${runId}/`, {})).status, 200);
    const res = await answer;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { in: { x: 'c' } });
    assert.equal((await waitForRun(http, runId)).status, 'CANCELED');
  });

  it('applies a pause action as an Update over the shared connection', async () => {
    const { http } = combined;
    const wf = (await http.post('/wf/', { name: 'combined pause', definition: gatedDefinition })).body;
    const started = (await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 1 } } })).body;
    await waitForRun(http, started.id, (r) => r.status === 'PAUSED');
    const res = await http.post(`/wf/process_pause_action/${started.id}/`, {
      action: 'APPROVE',
      inputs: { ok: true },
      user_id: 'ana',
      comments: 'fine',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const done = await waitForRun(http, started.id);
    assert.equal(done.status, 'COMPLETED');
    assert.deepEqual(done.tasks.find((t: { node_id: string }) => t.node_id === 'gate').outputs, {
      ok: true,
      in: { x: 1 },
    });
  });

  it("logs no error when a client leaves a run's event stream", async () => {
    const { http } = combined;
    const wf = (await http.post('/wf/', { name: 'combined stream', definition: gatedDefinition })).body;
    const started = (await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 1 } } })).body;
    const stream = await openSse(`${combined.baseUrl}/run/${started.id}/events/`);
    await stream.waitFor((events) => events.some((e) => e.event === 'run.paused'));
    stream.close();
    // The api learns of the closed socket on its next write: cancelling the run writes its last events.
    assert.equal((await http.post(`/wf/cancel_workflow/${started.id}/`, {})).status, 200);
    await waitForRun(http, started.id, (r) => r.status === 'CANCELED');
    await setTimeout(1000);
    assert.doesNotMatch(await readFile(combined.logFile, 'utf8'), /unhandled error in koa/);
  });

  it('stops on SIGTERM with exit code 0', async () => {
    process.kill(combined.process.pid, 'SIGTERM');
    // A process that never stops fails on the suite's timeout.
    assert.equal(await combined.process.exited, 0);
  });
});
