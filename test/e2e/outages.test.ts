// kill -9 of FerretDB and of the Temporal server with runs in flight: every endpoint answers 503
// with Retry-After (never another 5xx) while one is down, recovers by itself when it is back on the
// same files and port, and every run ends COMPLETED with its outputs and one task record per node.
import assert from 'node:assert/strict';
import path from 'node:path';
import { freePort } from '../../scripts/lib/ports';
import {
  type FerretDbServer,
  TEMPORAL_DEV_OPTIONS,
  type TemporalServer,
  startFerretDb,
  startTemporal,
} from '../../scripts/lib/servers';
import { startApi, type TestApi } from '../support/api';
import { waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { startFakeLlmServer } from '../support/fake-llm-server';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { runsWithStoredTasks } from '../support/db-state';
import { runLeftUnstarted } from '../support/half-started-runs';
import { fakeProviderSettings } from '../support/llm-engine';
import { attemptsOf, sleeper } from '../support/node-attempts';
import { costAtPublishedPrice } from '../support/prices';
import { stack } from '../support/stack';
import { startWorker, type TestWorker } from '../support/worker';

type Http = ReturnType<typeof client>;
const RUNS = 5;
const NODES = ['src', 'p1', 'p2', 'out'];

/** src → p1 (quick) → p2 (long enough to be cut off by the outage) → out.result = `<x>-p1-p2`. */
const definition = {
  nodes: [
    n('src', 'InputNode', { output_schema: { x: 'string' } }),
    sleeper('p1', 0.2, { node: 'src', field: 'x' }, 'y'),
    sleeper('p2', 6, { node: 'p1', field: 'y' }, 'z'),
    n('out', 'OutputNode', { output_map: { result: 'p2.z' } }),
  ],
  links: [l('src', 'p1'), l('p1', 'p2'), l('p2', 'out')],
};

async function startRuns(api: TestApi, http: Http, prefix: string): Promise<{ workflowId: string; runIds: string[] }> {
  const wf = await http.post('/wf/', { name: `outage ${prefix}`, definition });
  assert.equal(wf.status, 200, wf.text);
  const runIds: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const res = await http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { src: { x: `x${i}` } } });
    assert.equal(res.status, 200, res.text);
    runIds.push(res.body.id);
  }
  await until('every run in p2, some still running it', () => attemptsOf(api).inFlightAt(runIds, 'p2'), 90_000);
  return { workflowId: wf.body.id, runIds };
}

/** Every run COMPLETED with its own outputs, one task per node, one task document per run. */
async function assertAllCompleted(api: TestApi, http: Http, runIds: string[]): Promise<void> {
  const done = await Promise.all(runIds.map((id) => waitForRun(http, id, undefined, 180_000)));
  for (const [i, run] of done.entries()) assert.equal(run.status, 'COMPLETED', `${runIds[i]}: ${run.message}`);
  for (const [i, id] of runIds.entries()) {
    const run = (await http.get(`/run/${id}/`)).body;
    assert.deepEqual(run.outputs.out, { result: `x${i}-p1-p2` }, id);
    assert.deepEqual(
      run.tasks.map((t: { node_id: string }) => t.node_id).sort(),
      [...NODES].sort(),
      `${id}: one task per node`,
    );
    assert.ok(
      run.tasks.every((t: { status: string }) => t.status === 'COMPLETED'),
      id,
    );
  }
  assert.equal(await runsWithStoredTasks(api.models, runIds), runIds.length, 'every run has its tasks stored');
}

/** Requests a user would send meanwhile; returns every answer as `<status> <method path>`. */
async function probe(
  http: Http,
  workflowId: string,
  runId: string,
): Promise<Array<{ what: string; status: number; retryAfter: string | null; detail: unknown }>> {
  const requests: Array<[string, () => ReturnType<Http['get']>]> = [
    ['GET /health/', () => http.get('/health/')],
    ['GET /wf/', () => http.get('/wf/')],
    [`GET /run/${runId}/`, () => http.get(`/run/${runId}/`)],
    ['POST start_run', () => http.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { src: { x: 'probe' } } })],
    ['POST run (blocking)', () => http.post(`/wf/${workflowId}/run/`, { initial_inputs: { src: { x: 'probe' } } })],
  ];
  const answers = [];
  for (const [what, send] of requests) {
    const res = await send();
    answers.push({
      what,
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      detail: (res.body as { detail?: unknown })?.detail,
    });
  }
  return answers;
}

describe('e2e: outages — kill -9 of FerretDB and of Temporal with runs in flight', function () {
  this.timeout(300_000);
  let api: TestApi | undefined;
  let worker: TestWorker | undefined;
  afterEach(async () => {
    await worker?.stop();
    await api?.close();
    worker = undefined;
    api = undefined;
  });

  it('FerretDB killed: 503 naming MongoDB meanwhile, then every run completes once it is back', async () => {
    let ferret: FerretDbServer = await startFerretDb({
      port: await freePort(),
      dataDir: path.join(stack.tmpDir, `ferret-outage-${Date.now()}`),
      logFile: path.join(stack.tmpDir, 'ferret-outage.log'),
    });
    try {
      api = await startApi({ SPUR_MONGODB_URI: ferret.uri, SPUR_MONGODB_TIMEOUT_MS: '2000' });
      worker = await startWorker(api.env);
      const http = client(api.baseUrl);
      const attempts = attemptsOf(api);
      const { workflowId, runIds } = await startRuns(api, http, 'f');

      ferret.handle.kill('SIGKILL');
      await ferret.handle.exited;
      const seen = await probe(http, workflowId, runIds[0] as string);
      for (const a of seen) {
        assert.equal(a.status, 503, `${a.what} during the outage: ${a.status} ${JSON.stringify(a.detail)}`);
        assert.ok(a.retryAfter, `${a.what}: Retry-After`);
        if (a.what !== 'GET /health/') assert.match(String(a.detail), /MongoDB/, a.what);
      }
      // The nodes in flight finish while the database is away (Temporal has their results); the
      // records wait for it.
      await until('p2 to end in every run', () => attempts.allAt(runIds, 'p2', ['completed']), 90_000);
      for (const a of await probe(http, workflowId, runIds[0] as string)) assert.equal(a.status, 503, a.what);

      ferret = await startFerretDb(ferret.options); // same files, same port
      await until('the api to recover by itself', async () => (await http.get('/health/')).status === 200, 60_000);
      await assertAllCompleted(api, http, runIds);
      for (const [i, id] of runIds.entries()) {
        for (const node of ['p1', 'p2'])
          assert.deepEqual(
            (await attempts.ofNode(id, node)).map((a) => [a.state, a.attempt]),
            [['completed', 1]],
            `${node} of run ${i} ran once`,
          );
      }
    } finally {
      await worker?.stop();
      worker = undefined;
      await api?.close();
      api = undefined;
      await ferret.handle.stop();
    }
  });

  it('FerretDB killed while a model call is in flight: the call is made once and priced once the database is back', async () => {
    let ferret: FerretDbServer = await startFerretDb({
      port: await freePort(),
      dataDir: path.join(stack.tmpDir, `ferret-llm-outage-${Date.now()}`),
      logFile: path.join(stack.tmpDir, 'ferret-llm-outage.log'),
    });
    const fake = await startFakeLlmServer();
    try {
      api = await startApi({ SPUR_MONGODB_URI: ferret.uri, SPUR_MONGODB_TIMEOUT_MS: '2000' });
      worker = await startWorker(api.env);
      const http = client(api.baseUrl);
      for (const [name, value] of Object.entries(fakeProviderSettings(fake)))
        assert.equal((await http.post('/env-mgmt/', { name, value })).status, 200, name);
      const model = 'openai/gpt-4o-mini';
      const wf = await http.post('/wf/', {
        name: 'model call across an outage',
        definition: {
          nodes: [
            input(),
            n('ask', 'SingleLLMCallNode', { llm_info: { model, max_tokens: 50 }, user_message: 'say {{in.x}}' }),
            n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
          ],
          links: [l('in', 'ask'), l('ask', 'out')],
        },
      });
      assert.equal(wf.status, 200, wf.text);
      // The reply comes while the database is away, which stays away for several of the node's
      // retries (1, 2, 4 s apart): a failed attempt would call the model again, or fail the node.
      fake.enqueue({ content: JSON.stringify({ output: 'hi' }), usage: { input: 700, output: 90 }, delayMs: 2000 });
      const started = await http.post(`/wf/${wf.body.id}/start_run/`, { initial_inputs: { in: { x: 'hi' } } });
      assert.equal(started.status, 200, started.text);
      await until('the model call in flight', async () => fake.requests.length === 1, 60_000);
      ferret.handle.kill('SIGKILL');
      await ferret.handle.exited;
      await new Promise((r) => setTimeout(r, 8000));
      ferret = await startFerretDb(ferret.options);

      const run = await waitForRun(http, started.body.id, undefined, 120_000);
      assert.equal(run.status, 'COMPLETED', run.message);
      assert.equal(fake.requests.length, 1, 'the model was called once');
      const stored = (await http.get(`/run/${started.body.id}/`)).body;
      assert.deepEqual(stored.outputs.out, { answer: 'hi' });
      const task = stored.tasks.find((t: { node_id: string }) => t.node_id === 'ask');
      assert.equal(task.usage.prompt_tokens, 700);
      assert.equal(task.usage.cost_usd, costAtPublishedPrice(model, [{ input: 700, output: 90 }]));
    } finally {
      await worker?.stop();
      worker = undefined;
      await api?.close();
      api = undefined;
      await fake.close();
      await ferret.handle.stop();
    }
  });

  it('Temporal killed: runs stay readable, starts answer 503 naming Temporal, every run completes once it is back', async () => {
    let temporal: TemporalServer = await startTemporal({
      ...TEMPORAL_DEV_OPTIONS,
      port: await freePort(),
      uiPort: null,
      dbFile: path.join(stack.tmpDir, `temporal-outage-${Date.now()}.db`),
      logFile: path.join(stack.tmpDir, 'temporal-outage.log'),
    });
    try {
      api = await startApi({ SPUR_TEMPORAL_ADDRESS: temporal.address });
      worker = await startWorker(api.env);
      const http = client(api.baseUrl);
      // A run recorded whose workflow never started (its api died first): a read asks Temporal about it.
      const unstartedWf = (await http.post('/wf/', { name: 'never started', definition })).body;
      const unstarted = await runLeftUnstarted({ api, http, close: async () => undefined }, unstartedWf.id, {
        src: { x: 'never' },
      });
      const { workflowId, runIds } = await startRuns(api, http, 't');

      temporal.handle.kill('SIGKILL');
      await temporal.handle.exited;
      const seen = await probe(http, workflowId, runIds[0] as string);
      for (const a of seen) {
        if (a.what.startsWith('GET /wf/') || a.what.startsWith('GET /run/')) {
          assert.equal(a.status, 200, `${a.what} reads MongoDB only`);
          continue;
        }
        assert.equal(a.status, 503, `${a.what} during the outage: ${a.status} ${JSON.stringify(a.detail)}`);
        assert.ok(a.retryAfter, `${a.what}: Retry-After`);
        if (a.what !== 'GET /health/') assert.match(String(a.detail), /Temporal/, a.what);
      }
      // Temporal cannot say whether it started: the record is shown as it is.
      const meanwhile = await http.get(`/run/${unstarted}/status/`);
      assert.equal(meanwhile.status, 200, meanwhile.text);
      assert.deepEqual([meanwhile.body.status, meanwhile.body.tasks], ['PENDING', []]);

      temporal = await startTemporal(temporal.options); // same SQLite file, same port
      await until('the api to recover by itself', async () => (await http.get('/health/')).status === 200, 60_000);
      const again = await http.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { src: { x: `x${RUNS}` } } });
      assert.equal(again.status, 200, `a start after the outage: ${again.text}`);
      await assertAllCompleted(api, http, [...runIds, again.body.id]);
    } finally {
      await worker?.stop();
      worker = undefined;
      await api?.close();
      api = undefined;
      await temporal.handle.stop();
    }
  });
});
