// Fleet-wide limits on model requests (PUT /api/limits/), against a local fake provider that
// counts the requests it is answering at once: two workers (the api's own and a worker process)
// share every limit, runs waiting for a slot show it, a 429's Retry-After holds the limit back.
import assert from 'node:assert/strict';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { type FakeLlmServer, mostAtOnce } from '../support/fake-llm-server';
import { input, l, n, oneLlmCall } from '../support/graphs';
import { attachFakeLlm } from '../support/llm-engine';
import { openSse } from '../support/sse';
import { type TestWorker, startWorker } from '../support/worker';
import { settingsReachWorkers } from '../support/settings';
import { until } from '../support/exec-log';

const MODEL = 'openai/gpt-4o-mini';

const oneCall = oneLlmCall(MODEL);

type Task = { node_id: string; status: string; waiting_for: string | null; waited_ms: number };

describe('e2e: fleet-wide limits on model requests', function () {
  this.timeout(180_000);
  let engine: Engine;
  let worker: TestWorker;
  let fake: FakeLlmServer;
  let workflowId: string;
  before(async () => {
    engine = await startEngine();
    worker = await startWorker(engine.api.env);
    fake = await attachFakeLlm(engine);
    workflowId = (await engine.http.post('/wf/', { name: 'limited', definition: oneCall })).body.id;
  });
  afterEach(async () => {
    assert.equal((await engine.http.put('/limits/', [])).status, 200);
    await settingsReachWorkers();
    fake.respondWith(undefined);
  });
  after(async () => {
    await worker?.stop();
    await engine?.close();
    await fake?.close();
  });

  const start = async (x: string) => {
    const res = await engine.http.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x } } });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  const completed = async (runIds: string[]) => {
    for (const id of runIds) {
      const run = await waitForRun(engine.http, id, undefined, 120_000);
      assert.equal(run.status, 'COMPLETED', `${id}: ${run.message}`);
    }
  };
  // Undefined until the run's first save has written its tasks.
  const askTask = async (runId: string) =>
    ((await engine.http.get(`/run/${runId}/`)).body.tasks as Task[]).find((t) => t.node_id === 'ask');
  const sent = () => fake.requests.filter((r) => r.protocol !== null);

  it('refuses a limit on an unknown provider, one without any limit, or a key given twice (422), and keeps the limits it had', async () => {
    assert.equal((await engine.http.put('/limits/', [{ key: 'openai', max_concurrent: 3 }])).status, 200);
    await settingsReachWorkers();
    for (const body of [
      [{ key: 'nobody', max_concurrent: 1 }],
      [{ key: 'openai' }],
      [{ key: 'openai', max_concurrent: 0 }],
      [
        { key: 'openai', max_concurrent: 1 },
        { key: 'openai', requests_per_minute: 1 },
      ],
      { key: 'openai', max_concurrent: 1 },
    ]) {
      const res = await engine.http.put('/limits/', body);
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
    }
    assert.deepEqual((await engine.http.get('/limits/')).body, [{ key: 'openai', max_concurrent: 3 }]);
  });

  it('max_concurrent 2: twenty runs on two workers never have more than 2 requests at the provider, and all complete', async () => {
    const put = await engine.http.put('/limits/', [{ key: 'openai', max_concurrent: 2 }]);
    assert.deepEqual(put.body, [{ key: 'openai', max_concurrent: 2 }], put.text);
    await settingsReachWorkers();
    const before = sent().length;
    // Long enough that calls overlap however slowly a loaded host starts the runs: the limit binds.
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), delayMs: 800 }));
    const runIds = await Promise.all(Array.from({ length: 20 }, (_, i) => start(`c${i}`)));
    await completed(runIds);
    assert.equal(sent().length - before, 20, 'one request per run');
    assert.equal(fake.maxInFlight, 2, 'the provider saw 2 at once at most (and the limit was used)');
    // Ended runs: every task is written.
    const tasks = (await Promise.all(runIds.map(askTask))) as Task[];
    assert.ok(
      tasks.some((t) => t.waited_ms >= 300),
      `some run waited for a slot: ${tasks.map((t) => t.waited_ms)}`,
    );
    assert.ok(tasks.every((t) => t.waiting_for === null));
  });

  it('requests_per_minute 3: three requests go, the others wait (task.waiting, waiting_for) until the limit is lifted', async () => {
    await engine.http.put('/limits/', [{ key: MODEL, requests_per_minute: 3 }]);
    await settingsReachWorkers();
    const before = sent().length;
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }) }));
    const runIds: string[] = [];
    for (let i = 0; i < 5; i++) runIds.push(await start(`r${i}`));
    const waiting: string[] = [];
    // Granted runs reach the provider a moment after their grant: both are awaited.
    await until('three requests made and two runs waiting for the limit', async () => {
      waiting.length = 0;
      for (const id of runIds) if ((await askTask(id))?.waiting_for === MODEL) waiting.push(id);
      return waiting.length === 2 && sent().length - before >= 3;
    });
    assert.equal(sent().length - before, 3, 'three requests in the minute');
    const stream = await openSse(`${engine.api.baseUrl}/run/${waiting[0]}/events/`);
    const seen = await stream.waitFor((events) => events.some((e) => e.event === 'task.waiting'), 10_000);
    stream.close();
    const event = seen.find((e) => e.event === 'task.waiting');
    assert.deepEqual({ node: event?.data.node_id, key: event?.data.limit_key }, { node: 'ask', key: MODEL });

    assert.equal((await engine.http.put('/limits/', [])).status, 200);
    await settingsReachWorkers();
    await completed(runIds);
    assert.equal(sent().length - before, 5);
    for (const id of waiting) assert.ok(((await askTask(id))?.waited_ms ?? 0) > 0, id);
  });

  it('a cancelled run gives its slot back at once: the run waiting behind it calls the provider before the cancelled call’s reply was due', async () => {
    await engine.http.put('/limits/', [{ key: 'openai', max_concurrent: 1 }]);
    await settingsReachWorkers();
    const before = sent().length;
    fake.enqueue({ content: JSON.stringify({ output: 'late' }), delayMs: 20_000 });
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }) }));
    const holder = await start('holder');
    await until('the holder’s call at the provider', async () => sent().length - before === 1);
    const waiter = await start('waiter');
    await until('the second run waiting for the slot', async () => (await askTask(waiter))?.waiting_for === 'openai');
    const cancel = await engine.http.post(`/wf/cancel_workflow/${holder}/`, {});
    assert.equal(cancel.status, 200, cancel.text);
    await completed([waiter]);
    assert.equal((await waitForRun(engine.http, holder)).status, 'CANCELED');
    const [held, next] = sent().slice(before);
    assert.ok(next && held && next.at < held.at + 20_000, 'the waiter went before the held reply was due');
    assert.equal(sent().length - before, 2);
  });

  it('a batch under max_concurrent 1 sends its rows one at a time (its rows run as workflows that wait), and every row completes', async () => {
    await engine.http.put('/limits/', [{ key: 'openai', max_concurrent: 1 }]);
    await settingsReachWorkers();
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), delayMs: 150 }));
    const fd = new FormData();
    fd.append(
      'file',
      new Blob([['x', ...Array.from({ length: 6 }, (_, i) => `b${i}`)].join('\n')], { type: 'text/csv' }),
      'rows.csv',
    );
    const ds = await engine.http.post('/ds/?name=limited-rows', fd);
    assert.equal(ds.status, 200, ds.text);
    const before = sent().length;
    const batch = await engine.http.post(`/wf/${workflowId}/start_batch_run/`, {
      dataset_id: ds.body.id,
      mini_batch_size: 6,
    });
    assert.equal(batch.status, 200, batch.text);
    const ended = await waitForRun(engine.http, batch.body.id, undefined, 120_000);
    assert.equal(ended.status, 'COMPLETED', ended.message);
    const requests = sent().slice(before);
    assert.equal(requests.length, 6);
    assert.equal(mostAtOnce(requests), 1, 'one request at a time');
  });

  it('a 429 with Retry-After: 2 holds back every waiting call of the limit for 2 s, then the run that got it retries and completes', async () => {
    await engine.http.put('/limits/', [{ key: 'openai', max_concurrent: 1 }]);
    await settingsReachWorkers();
    const before = sent().length;
    fake.enqueue({ status: 429, headers: { 'retry-after': '2' } });
    fake.respondWith(() => ({ content: JSON.stringify({ output: 'ok' }), delayMs: 100 }));
    const runIds = await Promise.all(['t0', 't1', 't2'].map(start));
    await completed(runIds);
    const requests = sent().slice(before);
    assert.equal(requests.length, 4, 'three calls and one retry');
    const refused = requests[0]?.answered;
    assert.equal(refused?.status, 429);
    for (const r of requests.slice(1))
      assert.ok(r.at - (refused?.at ?? 0) >= 2000, `a request ${r.at - (refused?.at ?? 0)} ms after the 429`);
  });
});

describe('e2e: a call waiting for a limit’s slot holds no activity slot of its worker', function () {
  this.timeout(120_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  before(async () => {
    // Two activity slots: one for the call holding the limit, one left for anything else.
    engine = await startEngine({ SPUR_WORKER_MAX_ACTIVITIES: '2' });
    fake = await attachFakeLlm(engine);
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  it('while one call holds max_concurrent 1 and another waits, a third run’s unlimited call still gets the free slot and completes', async () => {
    const workflowOf = async (model: string) => {
      const definition = {
        nodes: [
          input(),
          n('ask', 'SingleLLMCallNode', { llm_info: { model, max_tokens: 50 }, user_message: 'say {{in.x}}' }),
          n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
        ],
        links: [l('in', 'ask'), l('ask', 'out')],
      };
      return (await engine.http.post('/wf/', { name: `slots ${model}`, definition })).body.id as string;
    };
    const limited = await workflowOf(MODEL);
    const other = await workflowOf('openai/gpt-4o');
    assert.equal((await engine.http.put('/limits/', [{ key: MODEL, max_concurrent: 1 }])).status, 200);
    await settingsReachWorkers();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    fake.respondWith((req) =>
      req.body.model === 'gpt-4o-mini' && !fake.requests.slice(0, -1).some((r) => r.body.model === 'gpt-4o-mini')
        ? { content: JSON.stringify({ output: 'held' }), gates: [{ afterChunks: 0, open: held }] }
        : { content: JSON.stringify({ output: 'ok' }) },
    );
    const start = async (workflowId: string, x: string) =>
      (await engine.http.post(`/wf/${workflowId}/start_run/`, { initial_inputs: { in: { x } } })).body.id as string;
    const task = async (runId: string) =>
      ((await engine.http.get(`/run/${runId}/`)).body.tasks as Task[]).find((t) => t.node_id === 'ask');

    const holder = await start(limited, 'holder');
    await until('the holder’s call at the provider', async () => fake.requests.length === 1);
    const waiter = await start(limited, 'waiter');
    await until('the waiter waiting for the slot', async () => (await task(waiter))?.waiting_for === MODEL);
    const third = await start(other, 'third');
    const done = await waitForRun(engine.http, third, undefined, 60_000);
    assert.equal(done.status, 'COMPLETED', done.message);
    assert.equal((await task(waiter))?.waiting_for, MODEL, 'the waiter still waits: its wait held no slot');
    release();
    for (const id of [holder, waiter])
      assert.equal((await waitForRun(engine.http, id, undefined, 60_000)).status, 'COMPLETED');
  });
});
