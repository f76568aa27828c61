// The metrics of docs/production.md#metrics move as things happen: real api and worker processes,
// driven over HTTP, each scraped on its own SPUR_METRICS_PORT and read with Prometheus's own parser
// (scripts/prom-parse). Amounts come from what the test did (and the fake provider answered),
// never from the code that counts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { freePort } from '../../scripts/lib/ports';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { startApi, type TestApi } from '../support/api';
import { type CallbackReceiver, startCallbackReceiver } from '../support/callback-receiver';
import { waitForRun } from '../support/engine';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server';
import { gatedByHuman, input, l, n, oneLlmCall, pythonExclaim } from '../support/graphs';
import { fakeProviderSettings } from '../support/llm-engine';
import { moved, scrape, scrapeUntil } from '../support/prom-scrape';
import { metricNamesIn } from '../support/promql-names';
import { settingsReachWorkers } from '../support/settings';
import { startWorker, type TestWorker } from '../support/worker';

const MODEL = 'openai/gpt-4o-mini';
const echo = { nodes: [input(), n('out', 'OutputNode', { output_map: { y: 'in.x' } })], links: [l('in', 'out')] };
const sleepy = {
  nodes: [
    n('src', 'InputNode', { output_schema: { x: 'string' } }),
    n('py', 'PythonFuncNode', {
      code: 'import time\ntime.sleep(120)\nreturn {"y": "late"}',
      output_schema: { y: 'string' },
    }),
  ],
  links: [l('src', 'py')],
};

describe('e2e: metrics move as runs, pauses, deliveries and model calls happen', function () {
  this.timeout(240_000);
  let base: TestApi;
  let api: ApiProcess;
  let worker: TestWorker;
  let fake: FakeLlmServer;
  let receiver: CallbackReceiver;
  const ports = { api: 0, worker: 0 };
  /** Every run and workflow id this file made: none may be a label's value. */
  const ids = new Set<string>();

  before(async () => {
    [fake, receiver, base] = await Promise.all([startFakeLlmServer(), startCallbackReceiver(), startApi()]);
    ports.api = await freePort();
    ports.worker = await freePort();
    api = await startApiProcess({ ...base.env, SPUR_METRICS_PORT: String(ports.api) });
    worker = await startWorker(base.env, { SPUR_METRICS_PORT: String(ports.worker), SPUR_PYTHON_MAX_CONCURRENT: '3' });
    for (const [name, value] of Object.entries(fakeProviderSettings(fake)))
      assert.equal((await api.http.post('/env-mgmt/', { name, value })).status, 200);
  });
  after(async () => {
    await worker?.stop();
    await api?.process.stop('SIGTERM', 15_000);
    await Promise.allSettled([base?.close(), fake?.close(), receiver?.close()]);
  });

  async function workflow(definition: object): Promise<string> {
    const wf = await api.http.post('/wf/', { name: `metrics ${Math.random()}`, definition });
    assert.equal(wf.status, 200, wf.text);
    ids.add(wf.body.id);
    return wf.body.id as string;
  }
  async function start(
    workflowId: string,
    body: Record<string, unknown> = { initial_inputs: { in: { x: 'x' } } },
  ): Promise<string> {
    const started = await api.http.post(`/wf/${workflowId}/start_run/`, body);
    assert.equal(started.status, 200, started.text);
    ids.add(started.body.id);
    return started.body.id as string;
  }
  it("a model call: the worker counts its tokens and cost by provider and model, times its node and the run, and counts the provider's request", async () => {
    // $10 per million tokens in and out, so 100 + 10 tokens cost $0.0011.
    const price = await api.http.put(`/usage/prices/${MODEL}`, { input_usd_per_mtok: 10, output_usd_per_mtok: 10 });
    assert.equal(price.status, 200, price.text);
    fake.respondWith(() => ({ content: 'hi', usage: { input: 100, output: 10 } }));
    const wf = await workflow(oneLlmCall(MODEL));
    const [apiBefore, before] = [await scrape(ports.api), await scrape(ports.worker)];
    const runId = await start(wf);
    assert.equal((await waitForRun(api.http, runId)).status, 'COMPLETED');
    const model = { provider: 'openai', model: 'gpt-4o-mini' };
    const after = await scrapeUntil(ports.worker, (s) => moved(before, s).value('spur_runs_finished_total') > 0);
    const d = moved(before, after);
    assert.equal(d.value('spur_llm_tokens_total', { ...model, kind: 'prompt' }), 100);
    assert.equal(d.value('spur_llm_tokens_total', { ...model, kind: 'completion' }), 10);
    assert.ok(
      Math.abs(d.value('spur_llm_cost_usd_total', model) - 0.0011) < 1e-12,
      String(d.value('spur_llm_cost_usd_total', model)),
    );
    assert.equal(
      d.observations('spur_node_duration_seconds', { node_type: 'SingleLLMCallNode', status: 'COMPLETED' }),
      1,
    );
    assert.equal(d.value('spur_outbound_requests_total', { kind: 'node', outcome: 'ok' }), 1);
    assert.equal(d.value('spur_runs_finished_total', { status: 'COMPLETED' }), 1);
    assert.equal(
      moved(apiBefore, await scrape(ports.api)).value('spur_runs_started_total', { run_type: 'interactive' }),
      1,
    );

    // The run's time as its record says it, in the bucket Prometheus would put it in.
    const run = (await api.http.get(`/run/${runId}/`)).body;
    const seconds = (Date.parse(`${run.end_time}Z`) - Date.parse(`${run.start_time}Z`)) / 1000;
    const [was] = before.series('spur_run_duration_seconds', { status: 'COMPLETED' });
    const [now] = after.series('spur_run_duration_seconds', { status: 'COMPLETED' });
    assert.ok(now?.buckets && now.sum !== undefined);
    assert.ok(Math.abs(now.sum - (was?.sum ?? 0) - seconds) < 1e-6, `${now.sum} - ${was?.sum} vs ${seconds}`);
    for (const bucket of now.buckets) {
      const grew = bucket.count - (was?.buckets?.find((b) => b.le === bucket.le)?.count ?? 0);
      assert.equal(
        grew,
        (bucket.le === '+Inf' ? Infinity : Number(bucket.le)) >= seconds ? 1 : 0,
        `le=${bucket.le} for ${seconds} s`,
      );
    }
  });

  it('a pause: the api shows it open while the run waits for a person, and closed once approved', async () => {
    const wf = await workflow(gatedByHuman);
    const before = await scrape(ports.api);
    const runId = await start(wf);
    await waitForRun(api.http, runId, (r) => r.status === 'PAUSED');
    assert.equal(moved(before, await scrape(ports.api)).value('spur_pauses_open'), 1);
    const approve = await api.http.post(`/wf/process_pause_action/${runId}/`, {
      action: 'APPROVE',
      user_id: 'me',
      inputs: {},
    });
    assert.equal(approve.status, 200, approve.text);
    assert.equal((await waitForRun(api.http, runId)).status, 'COMPLETED');
    assert.equal(moved(before, await scrape(ports.api)).value('spur_pauses_open'), 0);
  });

  it('an event stream: the api counts it while it is open', async () => {
    const runId = await start(await workflow(gatedByHuman));
    await waitForRun(api.http, runId, (r) => r.status === 'PAUSED');
    const before = await scrape(ports.api);
    const reading = new AbortController();
    const stream = await fetch(`${api.baseUrl}/run/${runId}/events/`, {
      headers: { accept: 'text/event-stream' },
      signal: reading.signal,
    });
    assert.equal(stream.status, 200);
    assert.equal(moved(before, await scrape(ports.api)).value('spur_event_streams'), 1);
    reading.abort();
    const closed = await scrapeUntil(ports.api, (s) => moved(before, s).value('spur_event_streams') === 0);
    assert.equal(moved(before, closed).value('spur_event_streams'), 0);
  });

  it("the sandbox: the worker's slots show busy while a Python node runs, and its node is timed", async () => {
    const rest = await scrape(ports.worker);
    assert.deepEqual(
      [rest.value('spur_sandbox_slots', { state: 'busy' }), rest.value('spur_sandbox_slots', { state: 'free' })],
      [0, 3],
    );
    const sleeping = await start(await workflow(sleepy), { initial_inputs: { src: { x: 'x' } } });
    const busy = await scrapeUntil(ports.worker, (s) => s.value('spur_sandbox_slots', { state: 'busy' }) === 1);
    assert.deepEqual(
      [busy.value('spur_sandbox_slots', { state: 'busy' }), busy.value('spur_sandbox_slots', { state: 'free' })],
      [1, 2],
    );
    assert.equal((await api.http.post(`/wf/cancel_workflow/${sleeping}/`, {})).status, 200);
    const freed = await scrapeUntil(ports.worker, (s) => s.value('spur_sandbox_slots', { state: 'busy' }) === 0);
    assert.equal(freed.value('spur_sandbox_slots', { state: 'free' }), 3);

    const before = await scrape(ports.worker);
    const runId = await start(await workflow(pythonExclaim), { initial_inputs: { src: { x: 'x' } } });
    assert.equal((await waitForRun(api.http, runId)).status, 'COMPLETED');
    const after = await scrapeUntil(ports.worker, (s) => moved(before, s).value('spur_runs_finished_total') > 0);
    assert.equal(
      moved(before, after).observations('spur_node_duration_seconds', {
        node_type: 'PythonFuncNode',
        status: 'COMPLETED',
      }),
      1,
    );
  });

  it('webhooks: a delivery that starts a run and one with an unknown token, by what became of each', async () => {
    const wf = await workflow(echo);
    const trigger = await api.http.post(`/wf/${wf}/triggers/`, { name: 'hook' });
    assert.equal(trigger.status, 200, trigger.text);
    const origin = new URL(api.baseUrl).origin;
    const before = await scrape(ports.api);
    const post = (path: string) =>
      fetch(`${origin}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"x": "w"}',
      });
    const delivered = await post(trigger.body.url);
    assert.equal(delivered.status, 202);
    ids.add(((await delivered.json()) as { run_id: string }).run_id);
    assert.equal((await post('/api/hooks/nosuchtokennosuchtokennosuchtoke')).status, 404);
    const d = moved(before, await scrape(ports.api));
    assert.equal(d.value('spur_webhook_deliveries_total', { status: 'started' }), 1);
    assert.equal(d.value('spur_webhook_deliveries_total', { status: 'rejected' }), 1);
    assert.equal(d.value('spur_webhook_deliveries_total'), 2);
  });

  it("a schedule's fire: the worker counts it started", async () => {
    const wf = await workflow(echo);
    const sc = await api.http.post(`/wf/${wf}/schedules/`, {
      interval_seconds: 60,
      initial_inputs: { in: { x: 's' } },
    });
    assert.equal(sc.status, 200, sc.text);
    const before = await scrape(ports.worker);
    // One fire time: the minute's start, between ten and nine minutes ago.
    const minute = Math.floor(Date.now() / 60_000) * 60_000 - 600_000;
    const backfill = await api.http.post(`/schedules/${sc.body.id}/backfill/`, {
      start_time: new Date(minute - 30_000).toISOString(),
      end_time: new Date(minute + 30_000).toISOString(),
    });
    assert.equal(backfill.status, 202, backfill.text);
    const after = await scrapeUntil(ports.worker, (s) => moved(before, s).value('spur_schedule_fires_total') > 0);
    assert.equal(moved(before, after).value('spur_schedule_fires_total', { outcome: 'started' }), 1);
    assert.equal(moved(before, after).value('spur_schedule_fires_total'), 1);
    assert.equal((await api.http.delete(`/wf/${wf}/`)).status, 204);
  });

  it('callbacks: one taken by its receiver, one refused (400): deliveries by outcome, and their requests', async () => {
    const wf = await workflow(echo);
    receiver.script('/no', 400);
    const before = await scrape(ports.worker);
    for (const path of ['/yes', '/no'])
      await start(wf, {
        initial_inputs: { in: { x: 'c' } },
        callback: { url: `${receiver.url}${path}`, secret: 'receiver-secret' },
      });
    const after = await scrapeUntil(ports.worker, (s) => moved(before, s).value('spur_callback_deliveries_total') >= 2);
    const d = moved(before, after);
    assert.equal(d.value('spur_callback_deliveries_total', { outcome: 'delivered' }), 1);
    assert.equal(d.value('spur_callback_deliveries_total', { outcome: 'failed' }), 1);
    assert.equal(d.value('spur_outbound_requests_total', { kind: 'callback', outcome: 'ok' }), 1);
    assert.equal(d.value('spur_outbound_requests_total', { kind: 'callback', outcome: 'http_error' }), 1);
  });

  it("a provider limit's breaker opened by hand: the worker counts the opening by the limit's key", async () => {
    // A provider no other test here calls: its breaker stays out of their way.
    const key = 'anthropic';
    const put = await api.http.put('/limits/', [
      { key, breaker: { failures: 5, window_seconds: 30, open_seconds: 5 } },
    ]);
    assert.equal(put.status, 200, put.text);
    await settingsReachWorkers();
    const before = await scrape(ports.worker);
    assert.equal((await api.http.post('/limits/breaker/', { key, state: 'open' })).status, 202);
    const after = await scrapeUntil(
      ports.worker,
      (s) => moved(before, s).value('spur_breaker_openings_total', { key }) >= 1,
    );
    assert.equal(moved(before, after).value('spur_breaker_openings_total', { key }), 1);
    // The same write shows it open on the limit's entry (it started the limit's workflow: seen lost before).
    const entry = ((await api.http.get('/limits/')).body as { key: string; breaker_state?: { state: string } }[]).find(
      (e) => e.key === key,
    );
    assert.equal(entry?.breaker_state?.state, 'open');
    assert.equal((await api.http.post('/limits/breaker/', { key, state: 'closed' })).status, 202);
  });

  it('labels are bounded: no series of either process names a run or a workflow this file made', async () => {
    assert.ok(ids.size > 10, `${ids.size} ids`);
    for (const port of [ports.api, ports.worker]) {
      const labelValues = (await scrape(port)).families.flatMap((f) =>
        f.series.flatMap((s) => Object.values(s.labels)),
      );
      for (const id of ids) {
        const named = new RegExp(`(^|[^A-Za-z0-9])${id}($|[^0-9])`);
        assert.deepEqual(
          labelValues.filter((v) => named.test(v)),
          [],
          `${id} on port ${port}`,
        );
      }
    }
  });

  it('the Grafana dashboard (deploy/grafana/spur-dashboard.json) selects only what these processes export, histograms by their series, and shows every spur_ metric', async () => {
    // Last in the file: what the tests above did gave every family series (a parser shows a family
    // only with one), and the SDK's names are those a worker really exports.
    const scrapes = [await scrape(ports.api), await scrape(ports.worker)];
    // What a selector may name: a counter's or gauge's name, a histogram's _bucket, _sum and _count.
    const selectable = new Set<string>();
    for (const f of scrapes.flatMap((s) => s.families))
      for (const name of f.type === 'HISTOGRAM' ? ['_bucket', '_sum', '_count'].map((x) => f.name + x) : [f.name])
        selectable.add(name);
    const dashboard = JSON.parse(readFileSync(path.join(REPO_ROOT, 'deploy/grafana/spur-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
    assert.ok(exprs.length > 20, `${exprs.length} expressions`);
    const unknown = exprs.flatMap(({ panel, expr }) =>
      metricNamesIn(expr)
        .filter((name) => !selectable.has(name))
        .map((name) => `${panel}: ${name}`),
    );
    assert.deepEqual(unknown, []);
    for (const { panel, expr } of exprs.filter((e) => e.expr.includes('histogram_quantile(')))
      assert.ok(
        metricNamesIn(expr).every((name) => name.endsWith('_bucket')),
        `${panel}: ${expr}`,
      );
    const used = new Set(exprs.flatMap(({ expr }) => metricNamesIn(expr)));
    const spur = scrapes.flatMap((s) => s.families).filter((f) => f.name.startsWith('spur_'));
    assert.deepEqual(
      spur.filter((f) => ![f.name, `${f.name}_bucket`, `${f.name}_count`].some((n) => used.has(n))).map((f) => f.name),
      [],
    );
    assert.ok(
      [...used].some((name) => name.startsWith('temporal_')),
      "a panel for the SDK's worker metrics",
    );
  });
});
