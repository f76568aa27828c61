import assert from 'node:assert/strict';
import { freePort } from '../../scripts/lib/ports';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { startApi, type TestApi } from '../support/api';
import { l, n } from '../support/graphs';
import { type Scrape, moved, scrape, scrapeUntil } from '../support/prom-scrape';
import { startWorker, type TestWorker } from '../support/worker';
import { waitForRun } from '../support/engine';

const echo = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('out', 'OutputNode', { output_map: { y: 'in.x' } }),
  ],
  links: [l('in', 'out')],
};

describe('e2e: the api and worker processes export Prometheus metrics on SPUR_METRICS_PORT', function () {
  this.timeout(120_000);
  // The database, task queue and keys of an api made for this file, shared by the processes below.
  let base: TestApi;
  let api: ApiProcess;
  let worker: TestWorker;
  let apiMetrics: number;
  let workerMetrics: number;

  before(async () => {
    base = await startApi();
    apiMetrics = await freePort();
    workerMetrics = await freePort();
    api = await startApiProcess({ ...base.env, SPUR_METRICS_PORT: String(apiMetrics) });
    worker = await startWorker(base.env, { SPUR_METRICS_PORT: String(workerMetrics) });
  });
  after(async () => {
    await worker?.stop();
    await api?.process.stop('SIGTERM', 15_000);
    await base?.close();
  });

  it('counts requests by route template, runs started on the api and runs finished on the worker', async () => {
    const wf = await api.http.post('/wf/', { name: 'metrics echo', definition: echo });
    assert.equal(wf.status, 200, wf.text);
    const apiBefore = await scrape(apiMetrics);
    const workerBefore = await scrape(workerMetrics);
    const route = { route: 'POST /wf/{workflow_id}/start_run/', status: '200' };

    for (const x of ['a', 'b', 'c']) {
      const started = await api.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x } } });
      assert.equal(started.status, 200, started.text);
      assert.equal((await waitForRun(api.http, started.body.id)).status, 'COMPLETED');
    }
    assert.equal((await api.http.get(`/wf/${wf.body.id}/no-such-route/`)).status, 404);

    const apiAfter = await scrape(apiMetrics);
    const onApi = moved(apiBefore, apiAfter);
    assert.equal(onApi.value('spur_http_requests_total', route), 3);
    assert.equal(onApi.value('spur_runs_started_total', { run_type: 'interactive' }), 3);
    assert.equal(onApi.observations('spur_http_request_duration_seconds', { route: route.route }), 3);
    assert.equal(apiAfter.family('spur_http_request_duration_seconds')?.type, 'HISTOGRAM');
    const workerAfter = await scrape(workerMetrics);
    assert.equal(moved(workerBefore, workerAfter).value('spur_runs_finished_total', { status: 'COMPLETED' }), 3);
    // Bounded labels: no series names a run's or a workflow's id.
    assert.doesNotMatch(apiAfter.text, new RegExp(`\\b${wf.body.id as string}\\b`));
    assert.ok(apiAfter.value('spur_http_requests_total', { route: 'api:unmatched', status: '404' }) >= 1);
    // Each gauge only where its thing is held: pauses and streams on the api, sandbox slots on the worker.
    const shown = (s: Scrape) =>
      ['spur_pauses_open', 'spur_event_streams', 'spur_sandbox_slots'].filter((f) => s.family(f));
    assert.deepEqual(shown(apiAfter), ['spur_pauses_open', 'spur_event_streams']);
    assert.deepEqual(shown(workerAfter), ['spur_sandbox_slots']);
  });

  it("serves the Temporal SDK's own worker metrics beside Spur's on the worker's one port", async () => {
    const wf = await api.http.post('/wf/', { name: 'metrics sdk', definition: echo });
    const before = await scrape(workerMetrics);
    const started = await api.http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'sdk' } } });
    assert.equal((await waitForRun(api.http, started.body.id)).status, 'COMPLETED');
    const run = { workflow_type: 'spurRun', task_queue: base.env.SPUR_TASK_QUEUE as string };
    const completed = (s: Scrape) => moved(before, s).value('temporal_workflow_completed', run);
    const after = await scrapeUntil(workerMetrics, (s) => completed(s) > 0);
    // One exposition, parsed whole: Spur's families and the SDK's, none twice.
    const names = after.families.map((f) => f.name);
    assert.ok(names.includes('spur_runs_finished_total'));
    assert.ok(names.includes('temporal_worker_task_slots_available'), names.join(' '));
    assert.equal(completed(after), 1);
  });

  it('answers only GET /metrics on the metrics port, and never on the API port', async () => {
    assert.equal((await fetch(`http://127.0.0.1:${apiMetrics}/`)).status, 404);
    assert.equal((await fetch(`http://127.0.0.1:${apiMetrics}/metrics`, { method: 'POST' })).status, 404);
    assert.equal((await api.http.get('/metrics')).status, 404);
  });
});

describe('e2e: the combined process (the api hosting a worker) serves both on its one metrics port', function () {
  this.timeout(120_000);
  let base: TestApi;
  let combined: ApiProcess;
  let port: number;
  before(async () => {
    base = await startApi();
    port = await freePort();
    combined = await startApiProcess({ ...base.env, SPUR_METRICS_PORT: String(port) }, 'src/processes/combined.ts');
  });
  after(async () => {
    await combined?.process.stop('SIGTERM', 15_000);
    await base?.close();
  });

  it("shows the api's requests, the run its worker finished and the SDK's worker metrics in one scrape", async () => {
    const wf = await combined.http.post('/wf/', { name: 'metrics combined', definition: echo });
    const before = await scrape(port);
    const run = await combined.http.post(`/wf/${wf.body.id}/run/`, { initial_inputs: { in: { x: 'c' } } });
    assert.equal(run.status, 200, run.text);
    const completed = (s: Scrape) =>
      moved(before, s).value('temporal_workflow_completed', { workflow_type: 'spurRun' });
    const d = moved(before, await scrapeUntil(port, (s) => completed(s) > 0));
    assert.equal(d.value('spur_http_requests_total', { route: 'POST /wf/{workflow_id}/run/', status: '200' }), 1);
    assert.equal(d.value('spur_runs_finished_total', { status: 'COMPLETED' }), 1);
    assert.equal(d.value('temporal_workflow_completed', { workflow_type: 'spurRun' }), 1);
  });
});
