import assert from 'node:assert/strict';
import { startApi, type TestApi } from '../support/api';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { until } from '../support/exec-log';
import { l, n } from '../support/graphs';
import { client } from '../support/http';
import { attemptsOf } from '../support/node-attempts';
import { assertWholeStream, openSse, type SseEvent } from '../support/sse';
import { startWorker, type TestWorker } from '../support/worker';

/** src → gate (human) → p (sleeps 4 s: what the worker's kill interrupts) → out. */
const code = ['import time', 'time.sleep(4)', 'return {"y": input_model["gate"]["src"]["tag"]}'].join('\n');
const definition = {
  nodes: [
    n('src', 'InputNode', { output_schema: { tag: 'string' } }),
    n('gate', 'HumanInterventionNode', { message: 'go?' }),
    n('p', 'PythonFuncNode', {
      code,
      timeout_seconds: 60,
      heartbeat_timeout_seconds: 3,
      output_schema: { y: 'string' },
    }),
    n('out', 'OutputNode', { output_map: { y: 'p.y' } }),
  ],
  links: [l('src', 'gate'), l('gate', 'p'), l('p', 'out')],
};

describe('e2e: run event stream across crashes', function () {
  this.timeout(240_000);
  let api: TestApi;
  let worker: TestWorker | undefined;
  let apiProcess: ApiProcess | undefined;
  after(async () => {
    apiProcess?.process.kill('SIGKILL');
    await worker?.stop();
    await api?.close();
  });

  it('a client reconnecting with Last-Event-ID after an api kill -9 and a worker kill -9 misses nothing and gets nothing twice', async () => {
    api = await startApi({ SPUR_EVENT_STREAM_POLL_MS: '50' });
    worker = await startWorker(api.env);
    apiProcess = await startApiProcess({ ...api.env, SPUR_EVENT_STREAM_POLL_MS: '50' });
    const http = client(api.baseUrl);
    const attempts = attemptsOf(api);
    const wf = (await http.post('/wf/', { name: 'events across crashes', definition })).body;
    const runId = (await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { src: { tag: 'c1' } } })).body
      .id as string;
    const received: SseEvent[] = [];

    // 1. On the api process until the run pauses; then that api dies.
    const first = await openSse(`${apiProcess.baseUrl}/run/${runId}/events/`);
    await first.waitFor((es) => es.some((e) => e.event === 'run.paused'));
    apiProcess.process.kill('SIGKILL');
    await apiProcess.process.exited;
    apiProcess = undefined;
    await first.ended;
    received.push(...first.events);

    // 2. Reconnected to another api; the run resumes, its Python node starts, the worker dies mid-node.
    const second = await openSse(`${api.baseUrl}/run/${runId}/events/`, {
      'Last-Event-ID': String(received.at(-1)?.id),
    });
    assert.equal(second.status, 200);
    assert.equal(
      (await http.post(`/wf/process_pause_action/${runId}/`, { action: 'APPROVE', user_id: 'ops', inputs: {} })).status,
      200,
    );
    await second.waitFor((es) => es.some((e) => e.event === 'task.started' && e.data.node_id === 'p'));
    await until('p to run on the worker', async () =>
      (await attempts.ofNode(runId, 'p')).some((a) => a.state === 'running' && a.workerPid === worker?.process.pid),
    );
    worker.process.kill('SIGKILL');
    await worker.process.exited;
    second.close();
    received.push(...second.events);
    worker = await startWorker(api.env);

    // 3. Reconnected once more: the rest, up to the final event.
    const third = await openSse(`${api.baseUrl}/run/${runId}/events/?after=0`, {
      'Last-Event-ID': String(received.at(-1)?.id),
    });
    assert.equal(await third.ended, true);
    received.push(...third.events);

    assertWholeStream(received);
    assert.equal(received.at(-1)?.event, 'run.completed');
    assert.equal(
      received.filter((e) => e.event === 'task.started' && e.data.node_id === 'p').length,
      1,
      'the retried node started once in the stream',
    );
    assert.deepEqual(received.find((e) => e.event === 'task.completed' && e.data.node_id === 'p')?.data.outputs, {
      y: 'c1',
    });
    const p = await attempts.ofNode(runId, 'p');
    assert.ok(
      p.length === 1 && (p[0]?.attempt ?? 0) >= 2 && p[0]?.workerPid === worker.process.pid,
      `the kill interrupted the node, which ran again on the new worker: ${JSON.stringify(p)}`,
    );
    // What the client pieced together is what the run's full replay says.
    const replay = await openSse(`${api.baseUrl}/run/${runId}/events/`);
    await replay.ended;
    assert.deepEqual(
      replay.events.map(({ id, event, data }) => ({ id, event, data })),
      received.map(({ id, event, data }) => ({ id, event, data })),
    );
  });
});
