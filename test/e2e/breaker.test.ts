// A provider limit's breaker (PUT /api/limits/ with `breaker`), against a local fake provider that
// answers 503 for a while: the breaker stops the calls, parks their runs in place and lets them go
// on once a probe succeeds; without it the same outage fails runs. Operators open and close it by
// hand, a worker killed while runs are parked loses none, and the worker's metrics count openings.
import assert from 'node:assert/strict';
import { freePort } from '../../scripts/lib/ports';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, memberWithKey, userWithKey } from '../support/access';
import { type TestApi, startApi } from '../support/api';
import { waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { fakeProviderSettings } from '../support/llm-engine';
import { openSse } from '../support/sse';
import { type TestWorker, startWorker } from '../support/worker';
import { settingsReachWorkers } from '../support/settings';
import { scrape } from '../support/prom-scrape';

const ADMIN_KEY = 'spur_breaker-admin-key-0123456789abcdef';
const MODEL = 'openai/gpt-4o-mini';
const OK = { content: JSON.stringify({ output: 'ok' }) };
/** The scenario: 50 runs while the provider answers 503 for 20 s. */
const RUNS = 50;
const OUTAGE_MS = 20_000;
const BREAKER = { failures: 5, window_seconds: 30, open_seconds: 5 };

type Http = ReturnType<typeof client>;
type Task = { node_id: string; status: string; waiting_for: string | null; waiting_reason: string | null };
type BreakerState = {
  state: string;
  since: string | null;
  opened_by: string | null;
  failures_in_window: number;
  probe_after: string | null;
};
type Entry = { key: string; breaker_state?: BreakerState };

describe("e2e: a provider limit's breaker parks runs while the provider fails, and lets them go on", function () {
  this.timeout(600_000);
  let api: TestApi;
  let worker: TestWorker;
  let workerMetrics: number;
  let fake: FakeLlmServer;
  let admin: Http;
  let workflowId: string;

  before(async () => {
    api = await startApi({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) });
    workerMetrics = await freePort();
    worker = await startWorker(api.env, { SPUR_METRICS_PORT: String(workerMetrics) });
    fake = await startFakeLlmServer();
    admin = client(api.baseUrl, bearer(ADMIN_KEY));
    for (const [name, value] of Object.entries(fakeProviderSettings(fake)))
      assert.equal((await admin.post('/env-mgmt/', { name, value })).status, 200);
    // No retry: without a breaker, a run whose call meets the outage fails (a loaded 2-core host
    // makes a few calls a second, so retries queued behind 50 runs' first calls could outlast it);
    // with one, even a node's last try is not spent on the outage.
    const definition = {
      nodes: [
        input(),
        n('ask', 'SingleLLMCallNode', {
          llm_info: { model: MODEL, max_tokens: 50 },
          user_message: 'say {{in.x}}',
          max_retries: 0,
        }),
        n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
      ],
      links: [l('in', 'ask'), l('ask', 'out')],
    };
    const wf = await admin.post('/wf/', { name: 'breaker', definition });
    assert.equal(wf.status, 200, wf.text);
    workflowId = wf.body.id;
  });
  afterEach(async () => {
    assert.equal((await admin.put('/limits/', [])).status, 200);
    await settingsReachWorkers();
    fake.respondWith(undefined);
  });
  after(async () => {
    await worker?.stop();
    await api?.close();
    await fake?.close();
  });

  const start = async (x: string) => {
    const res = await admin.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x } } });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  const startMany = (tag: string, count: number) =>
    Promise.all(Array.from({ length: count }, (_, i) => start(`${tag}${i}`)));
  /** The runs once ended, in order: their status, and their message (why one failed). */
  const endedRuns = async (runIds: string[]) => {
    const runs: { status: string; message?: string | null }[] = [];
    for (const id of runIds) runs.push(await waitForRun(admin, id, undefined, 240_000));
    return runs;
  };
  const ended = async (runIds: string[]) => (await endedRuns(runIds)).map((r) => r.status);
  const sent = () => fake.requests.filter((r) => r.protocol !== null);
  const askTask = async (runId: string) =>
    ((await admin.get(`/run/${runId}/`)).body.tasks as Task[] | undefined)?.find((t) => t.node_id === 'ask');
  const breakerOf = async (who: Http = admin, key = 'openai') =>
    ((await who.get('/limits/')).body as Entry[]).find((e) => e.key === key)?.breaker_state;
  /**
   * The provider answers 503 for `ms` from the first call it gets, then the right answer; returns
   * when the outage ends. Timed from the first call, not the test's start: on a loaded host starting
   * the runs can take most of the outage, which then ended before the breaker had anything to count.
   */
  const outageFor = (ms: number) => {
    let end: number | null = null;
    fake.respondWith(() => {
      end ??= Date.now() + ms;
      return Date.now() < end ? { status: 503 } : OK;
    });
    return () => end ?? Number.POSITIVE_INFINITY;
  };
  const openings = async (key: string) => {
    return (await scrape(workerMetrics)).value('spur_breaker_openings_total', { key });
  };

  it('refuses a breaker with a count below 1 or an unknown field (422), keeps the limits it had, and takes a breaker alone', async () => {
    assert.equal((await admin.put('/limits/', [{ key: 'openai', max_concurrent: 3 }])).status, 200);
    await settingsReachWorkers();
    for (const breaker of [
      { ...BREAKER, failures: 0 },
      { ...BREAKER, open_seconds: 0 },
      { failures: 5, window_seconds: 30 },
      { ...BREAKER, extra: 1 },
    ]) {
      const res = await admin.put('/limits/', [{ key: 'openai', breaker }]);
      assert.equal(res.status, 422, `${JSON.stringify(breaker)}: ${res.text}`);
    }
    assert.deepEqual((await admin.get('/limits/')).body, [{ key: 'openai', max_concurrent: 3 }]);
    const put = await admin.put('/limits/', [{ key: 'openai', breaker: BREAKER }]);
    assert.equal(put.status, 200, put.text);
    await settingsReachWorkers();
    assert.deepEqual(put.body, [
      {
        key: 'openai',
        breaker: BREAKER,
        breaker_state: { state: 'closed', since: null, opened_by: null, failures_in_window: 0, probe_after: null },
      },
    ]);
  });

  it(`with a breaker: ${RUNS} runs through a ${OUTAGE_MS / 1000} s outage all complete, and the provider saw at most failures + probes during it`, async () => {
    const put = await admin.put('/limits/', [{ key: 'openai', max_concurrent: BREAKER.failures, breaker: BREAKER }]);
    assert.equal(put.status, 200, put.text);
    await settingsReachWorkers();
    const before = sent().length;
    const openedBefore = await openings('openai');
    const outageEnd = outageFor(OUTAGE_MS);
    const runIds = await startMany('b', RUNS);
    await until('the breaker open', async () => (await breakerOf())?.state === 'open', 60_000);
    const statuses = await ended(runIds);
    assert.deepEqual(
      statuses.filter((s) => s !== 'COMPLETED'),
      [],
      'no run failed',
    );
    const requests = sent().slice(before);
    const end = outageEnd();
    const duringOutage = requests.filter((r) => r.at < end).length;
    // A probe goes at most every open_seconds: at most one more than the outage holds of them.
    const probes = Math.floor(OUTAGE_MS / 1000 / BREAKER.open_seconds) + 1;
    assert.ok(duringOutage >= BREAKER.failures, `the outage was met: ${duringOutage}`);
    assert.ok(
      duringOutage <= BREAKER.failures + probes,
      `${duringOutage} requests during the outage, at most ${BREAKER.failures} + ${probes} probes`,
    );
    assert.equal(requests.filter((r) => r.at >= end).length, RUNS, 'after it, one call per run');
    assert.equal((await breakerOf())?.state, 'closed');
    assert.ok((await openings('openai')) - openedBefore >= 1, 'the worker counted the opening');
  });

  it(`without a breaker: the same ${RUNS} runs through the same outage fail, and each of their calls reached the provider`, async () => {
    const put = await admin.put('/limits/', [{ key: 'openai', max_concurrent: BREAKER.failures }]);
    assert.equal(put.status, 200, put.text);
    await settingsReachWorkers();
    const before = sent().length;
    const outageEnd = outageFor(OUTAGE_MS);
    const runIds = await startMany('n', RUNS);
    const statuses = await ended(runIds);
    const failed = statuses.filter((s) => s === 'FAILED').length;
    assert.ok(failed >= BREAKER.failures, `runs failed: ${statuses.join(' ')}`);
    const end = outageEnd();
    const duringOutage = sent()
      .slice(before)
      .filter((r) => r.at < end).length;
    const probes = Math.floor(OUTAGE_MS / 1000 / BREAKER.open_seconds) + 1;
    assert.ok(duringOutage > BREAKER.failures + probes, `${duringOutage} requests during the outage`);
  });

  it('a parked run shows task.waiting with reason breaker_open; GET /limits/ shows the breaker open, then closed once a probe succeeds', async () => {
    const breaker = { failures: 2, window_seconds: 60, open_seconds: 2 };
    assert.equal((await admin.put('/limits/', [{ key: MODEL, max_concurrent: 2, breaker }])).status, 200);
    await settingsReachWorkers();
    let down = true;
    fake.respondWith(() => (down ? { status: 503 } : OK));
    const runIds = await startMany('p', 4);
    await until('the breaker open', async () => (await breakerOf(admin, MODEL))?.state === 'open', 60_000);
    const open = (await breakerOf(admin, MODEL)) as BreakerState;
    assert.equal(open.opened_by, 'failures');
    assert.equal(Date.parse(open.probe_after ?? '') - Date.parse(open.since ?? ''), breaker.open_seconds * 1000);
    let parked = '';
    await until('a run parked by the breaker', async () => {
      for (const id of runIds) if ((await askTask(id))?.waiting_reason === 'breaker_open') parked = id;
      return parked !== '';
    });
    assert.equal((await askTask(parked))?.waiting_for, MODEL);
    const stream = await openSse(`${api.baseUrl}/run/${parked}/events/`, bearer(ADMIN_KEY));
    const seen = await stream.waitFor((events) => events.some((e) => e.data?.reason === 'breaker_open'), 20_000);
    stream.close();
    const event = seen.find((e) => e.event === 'task.waiting' && e.data?.reason === 'breaker_open');
    assert.deepEqual({ node: event?.data.node_id, key: event?.data.limit_key }, { node: 'ask', key: MODEL });

    down = false;
    assert.deepEqual(await ended(runIds), ['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED']);
    await until('the breaker closed', async () => (await breakerOf(admin, MODEL))?.state === 'closed');
    assert.equal((await askTask(parked))?.waiting_reason, null);
  });

  it('opened by hand: no call goes out and runs wait, also through a worker killed with kill -9; closed by hand, they complete', async () => {
    assert.equal((await admin.put('/limits/', [{ key: 'openai', max_concurrent: 10 }])).status, 200);
    await settingsReachWorkers();
    fake.respondWith(() => OK);
    const opened = await admin.post('/limits/breaker/', { key: 'openai', state: 'open' });
    assert.equal(opened.status, 202, opened.text);
    await until('the breaker open', async () => (await breakerOf())?.state === 'open');
    assert.equal((await breakerOf())?.opened_by, 'operator');
    const before = sent().length;
    const runIds = await startMany('h', 3);
    await until('every run parked', async () => {
      const tasks = await Promise.all(runIds.map(askTask));
      return tasks.every((t) => t?.waiting_reason === 'breaker_open');
    });

    worker.process.kill('SIGKILL');
    await worker.process.exited;
    worker = await startWorker(api.env, { SPUR_METRICS_PORT: String(workerMetrics) });
    // An operator's opening sends no probe, however long it stays open.
    assert.equal((await breakerOf())?.probe_after, null);
    assert.equal(sent().length - before, 0, 'no call went out while open');
    for (const id of runIds) assert.equal((await askTask(id))?.status, 'RUNNING', id);

    const closed = await admin.post('/limits/breaker/', { key: 'openai', state: 'closed' });
    assert.equal(closed.status, 202, closed.text);
    assert.deepEqual(await ended(runIds), ['COMPLETED', 'COMPLETED', 'COMPLETED']);
    assert.equal(sent().length - before, 3);
    assert.equal((await breakerOf())?.state, 'closed');
  });

  it('a switch of an unknown limit is 404, a bad state 422; a viewer (403) and another workspace’s admin (404) cannot switch this workspace’s breaker', async () => {
    assert.equal((await admin.put('/limits/', [{ key: 'openai', max_concurrent: 10 }])).status, 200);
    await settingsReachWorkers();
    assert.equal((await admin.post('/limits/breaker/', { key: 'anthropic', state: 'open' })).status, 404);
    assert.equal((await admin.post('/limits/breaker/', { key: 'openai', state: 'ajar' })).status, 422);
    const viewer = client(api.baseUrl, bearer((await userWithKey(admin, 'breaker-viewer', 'viewer')).key.key));
    const team = await admin.post('/access/workspaces/', { name: 'breaker-team' });
    assert.equal(team.status, 201, team.text);
    const other = client(
      api.baseUrl,
      bearer((await memberWithKey(admin, team.body.id, 'breaker-lead', 'admin')).key.key),
    );
    assert.equal((await viewer.post('/limits/breaker/', { key: 'openai', state: 'open' })).status, 403);
    assert.equal((await other.post('/limits/breaker/', { key: 'openai', state: 'open' })).status, 404);
    assert.equal((await other.post('/limits/fleet/breaker/', { key: 'openai', state: 'open' })).status, 403);

    // Neither reached the breaker: a call still goes out at once.
    fake.respondWith(() => OK);
    const before = sent().length;
    const [after] = await endedRuns([await start('after')]);
    assert.equal(after?.status, 'COMPLETED', after?.message ?? undefined);
    assert.equal(sent().length - before, 1);
    assert.equal((await breakerOf())?.state ?? 'closed', 'closed');
  });
});
