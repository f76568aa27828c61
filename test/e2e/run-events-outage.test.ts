import assert from 'node:assert/strict';
import path from 'node:path';
import { freePort } from '../../scripts/lib/ports';
import { type FerretDbServer, startFerretDb } from '../../scripts/lib/servers';
import { startApi, type TestApi } from '../support/api';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { type SseEvent, assertWholeStream, openSse } from '../support/sse';
import { stack } from '../support/stack';
import { startWorker, type TestWorker } from '../support/worker';

/** in → gate (human) → out: the stream waits at the pause while the test breaks things. */
const gated = {
  nodes: [input(), n('gate', 'HumanInterventionNode', { message: 'go?' }), n('out', 'OutputNode')],
  links: [l('in', 'gate'), l('gate', 'out')],
};
const STREAM = { SPUR_EVENT_STREAM_POLL_MS: '50', SPUR_EVENT_STREAM_KEEPALIVE_SECONDS: '1' };
const strip = (events: SseEvent[]) => events.map(({ id, event, data }) => ({ id, event, data }));

describe('e2e: a run event stream through a MongoDB outage and an api drain', function () {
  this.timeout(240_000);
  let api: TestApi | undefined;
  let worker: TestWorker | undefined;
  let apiProcess: ApiProcess | undefined;
  let ferret: FerretDbServer | undefined;
  afterEach(async () => {
    apiProcess?.process.kill('SIGKILL');
    await worker?.stop();
    await api?.close();
    await ferret?.handle.stop();
    [api, worker, apiProcess, ferret] = [undefined, undefined, undefined, undefined];
  });

  async function pausedRun(http: ReturnType<typeof client>): Promise<string> {
    const wf = (await http.post('/wf/', { name: `stream-${Math.random()}`, definition: gated })).body;
    const runId = (await http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 1 } } })).body.id as string;
    await waitForRun(http, runId, (r) => r.status === 'PAUSED', 60_000);
    return runId;
  }

  it('stays open while FerretDB is killed (keep-alives go on), then carries the run to its end on the same connection', async () => {
    ferret = await startFerretDb({
      port: await freePort(),
      dataDir: path.join(stack.tmpDir, `ferret-stream-${Date.now()}`),
      logFile: path.join(stack.tmpDir, 'ferret-stream.log'),
    });
    api = await startApi({ ...STREAM, SPUR_MONGODB_URI: ferret.uri, SPUR_MONGODB_TIMEOUT_MS: '2000' });
    worker = await startWorker(api.env);
    const http = client(api.baseUrl);
    const runId = await pausedRun(http);
    const stream = await openSse(`${api.baseUrl}/run/${runId}/events/`);
    await stream.waitFor((es) => es.some((e) => e.event === 'run.paused'), 60_000);

    ferret.handle.kill('SIGKILL');
    await ferret.handle.exited;
    await until('the api to report the database down', async () => (await http.get('/health/')).status === 503, 60_000);
    const comments = stream.comments.length;
    await until('a keep-alive on the stream during the outage', () => stream.comments.length > comments, 30_000);
    ferret = await startFerretDb(ferret.options); // same files, same port
    await until('the api to recover by itself', async () => (await http.get('/health/')).status === 200, 60_000);

    assert.equal(
      (await http.post(`/wf/process_pause_action/${runId}/`, { action: 'APPROVE', user_id: 'ops', inputs: {} })).status,
      200,
    );
    assert.equal(await stream.ended, true, 'the server ended the stream after the final event');
    assertWholeStream(stream.events);
    assert.equal(stream.events.at(-1)?.event, 'run.completed');
    const replay = await openSse(`${api.baseUrl}/run/${runId}/events/`);
    await replay.ended;
    assert.deepEqual(strip(stream.events), strip(replay.events), 'the stream missed nothing and repeated nothing');
  });

  it('is ended cleanly when its api drains on SIGTERM; the client resumes elsewhere with Last-Event-ID', async () => {
    api = await startApi(STREAM);
    worker = await startWorker(api.env);
    apiProcess = await startApiProcess({ ...api.env, ...STREAM, SPUR_SHUTDOWN_DRAIN_SECONDS: '2' });
    const runId = await pausedRun(apiProcess.http);
    const first = await openSse(`${apiProcess.baseUrl}/run/${runId}/events/`);
    await first.waitFor((es) => es.some((e) => e.event === 'run.paused'), 60_000);

    process.kill(apiProcess.process.pid, 'SIGTERM');
    assert.equal(await first.ended, true, 'the server ended the stream (not a broken connection)');
    assert.equal(await apiProcess.process.exited, 0);
    apiProcess = undefined;

    const http = client(api.baseUrl);
    const second = await openSse(`${api.baseUrl}/run/${runId}/events/`, {
      'Last-Event-ID': String(first.events.at(-1)?.id),
    });
    assert.equal(second.status, 200);
    assert.equal(
      (await http.post(`/wf/process_pause_action/${runId}/`, { action: 'APPROVE', user_id: 'ops', inputs: {} })).status,
      200,
    );
    assert.equal(await second.ended, true);
    const received = [...first.events, ...second.events];
    assertWholeStream(received);
    const replay = await openSse(`${api.baseUrl}/run/${runId}/events/`);
    await replay.ended;
    assert.deepEqual(strip(received), strip(replay.events));
  });
});
