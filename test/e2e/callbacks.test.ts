import assert from 'node:assert/strict';
import { createCallbackDeliveries } from '../../src/db/callback-deliveries';
import { startApi, type TestApi } from '../support/api';
import { DROP, startCallbackReceiver, validSignature, type CallbackReceiver } from '../support/callback-receiver';
import { startEngine, waitForRun, type Engine } from '../support/engine';
import { client } from '../support/http';
import { input, l, n } from '../support/graphs';
import { callbackWorkflowId } from '../../src/contracts/callback-contract';
import { runWorkflowId } from '../../src/contracts/workflow-names';

const SECRET = 'receiver-shared-secret-7f3a';

const pure = { nodes: [input(), n('out', 'OutputNode', { output_map: { answer: 'in.x' } })], links: [l('in', 'out')] };
/** in → gate (a human) → out. */
const gated = {
  nodes: [
    input(),
    n('gate', 'HumanInterventionNode', { message: 'Check it' }),
    n('out', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
  ],
  links: [l('in', 'gate'), l('gate', 'out')],
};

/** Every byte string in a Temporal history, decoded: payloads are where inputs and results live. */
function historyText(value: unknown, out: string[] = []): string[] {
  if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) historyText(v, out);
  return out;
}

describe('e2e: run callbacks', function () {
  this.timeout(120_000);
  let engine: Engine;
  let receiver: CallbackReceiver;
  before(async () => {
    receiver = await startCallbackReceiver();
    // The receiver is on loopback: this installation allows it. Retries are quick here (0.2 s, doubling to 1 s).
    engine = await startEngine({
      SPUR_OUTBOUND_ALLOW_PRIVATE: 'true',
      SPUR_CALLBACK_RETRY_FIRST_SECONDS: '0.2',
      SPUR_CALLBACK_RETRY_MAX_SECONDS: '1',
    });
  });
  after(async () => {
    await engine?.close();
    await receiver?.close();
  });

  async function workflow(definition: unknown) {
    const res = await engine.http.post('/wf/', { name: `callbacks-${Math.random()}`, definition });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as string;
  }
  const runWf = (runId: string) => runWorkflowId(runId, engine.api.config.temporal.workflowIdPrefix);

  /** Polls the deliveries route until `done` holds. */
  async function deliveries(runId: string, done: (d: any) => boolean) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await engine.http.get(`/run/${runId}/callbacks/`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      if (done(res.body)) return res.body;
      if (Date.now() > deadline) throw new Error(`deliveries of ${runId}: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('posts the final event, signed, with the run as GET /run/{id}/ shows it; the route lists the delivery', async () => {
    const wf = await workflow(pure);
    const path = '/hooks/final';
    const res = await engine.http.post(`/wf/${wf}/start_run/`, {
      initial_inputs: { in: { x: 'hello' } },
      callback: { url: `${receiver.url}${path}`, secret: SECRET },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal('callback' in res.body, false, 'the run body does not show its callback');
    const runId = res.body.id as string;
    const [hit] = await receiver.waitFor(path, 1);
    assert.ok(hit);
    assert.ok(validSignature(SECRET, hit), 'the signature is the HMAC-SHA256 of the raw body');
    assert.equal(validSignature('another-secret', hit), false);
    assert.equal(hit.headers['x-spur-event'], 'run.completed');
    assert.equal(hit.headers['x-spur-event-id'], `${runId}:run.completed:1`);
    assert.equal(hit.headers['content-type'], 'application/json');
    assert.equal(hit.body.event, 'run.completed');
    const run = (await engine.http.get(`/run/${runId}/`)).body;
    assert.equal(run.status, 'COMPLETED');
    assert.deepEqual(hit.body.run, run);

    const listed = await deliveries(runId, (d) => d.deliveries[0]?.status === 'delivered');
    assert.deepEqual(listed.callback, {
      url: `${receiver.url}${path}`,
      events: ['run.completed', 'run.failed', 'run.canceled'],
    });
    assert.equal(JSON.stringify(listed).includes(SECRET), false, 'the secret is never shown');
    assert.equal(listed.deliveries.length, 1);
    const [delivery] = listed.deliveries;
    assert.equal(delivery.id, `${runId}:run.completed:1`);
    assert.equal(delivery.event, 'run.completed');
    assert.deepEqual(
      delivery.attempts.map((a: any) => [a.attempt, a.status_code, a.error]),
      [[1, 200, null]],
    );
    assert.ok(!Number.isNaN(Date.parse(delivery.attempts[0].time)));
  });

  it('keeps the secret out of Temporal: sealed on the run record, absent from the run and delivery histories', async () => {
    const wf = await workflow(pure);
    const path = '/hooks/secret';
    const runId = (
      await engine.http.post(`/wf/${wf}/start_run/`, {
        initial_inputs: { in: { x: 1 } },
        callback: { url: `${receiver.url}${path}`, secret: SECRET },
      })
    ).body.id as string;
    await receiver.waitFor(path, 1);
    const stored = await engine.api.models.Run.findById(runId).lean<any>();
    assert.ok(stored.callback.secret && !stored.callback.secret.includes(SECRET), 'stored sealed');
    const runHistory = historyText(await engine.api.temporal.workflow.getHandle(runWf(runId)).fetchHistory()).join(
      '\n',
    );
    assert.ok(runHistory.includes(runId) && runHistory.includes('run.completed'), 'the decoded history is searched');
    assert.equal(runHistory.includes(SECRET), false);
    assert.equal(runHistory.includes(path), false, 'not even the url is in the run history');
    const deliveryHistory = historyText(
      await engine.api.temporal.workflow
        .getHandle(callbackWorkflowId(engine.api.config.temporal.workflowIdPrefix, `${runId}:run.completed:1`))
        .fetchHistory(),
    ).join('\n');
    assert.ok(deliveryHistory.includes(runId));
    assert.equal(deliveryHistory.includes(SECRET), false);
  });

  it('retries after 500, 500 and delivers the same event (same id, valid signature); the route lists the three attempts', async () => {
    const wf = await workflow(pure);
    const path = '/hooks/flaky';
    receiver.script(path, 500, 500);
    const res = await engine.http.post(`/wf/${wf}/run/`, {
      initial_inputs: { in: { x: 'b' } },
      callback: { url: `${receiver.url}${path}`, secret: SECRET },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const hits = await receiver.waitFor(path, 3);
    const runId = String(hits[0]?.body.run.id);
    for (const hit of hits) {
      assert.ok(validSignature(SECRET, hit));
      assert.equal(hit.headers['x-spur-event-id'], `${runId}:run.completed:1`);
      assert.equal(hit.body.run.status, 'COMPLETED');
    }
    const listed = await deliveries(runId, (d) => d.deliveries[0]?.status === 'delivered');
    assert.deepEqual(
      listed.deliveries[0].attempts.map((a: any) => [a.attempt, a.status_code]),
      [
        [1, 500],
        [2, 500],
        [3, 200],
      ],
    );
    const times = listed.deliveries[0].attempts.map((a: any) => Date.parse(a.time));
    assert.ok(times[0] <= times[1] && times[1] <= times[2], 'attempts in order');
  });

  it('retries a dropped connection and a 429 too', async () => {
    const wf = await workflow(pure);
    const path = '/hooks/dropping';
    receiver.script(path, DROP, 429);
    const runId = (
      await engine.http.post(`/wf/${wf}/start_run/`, {
        initial_inputs: { in: { x: 1 } },
        callback: { url: `${receiver.url}${path}`, secret: SECRET },
      })
    ).body.id as string;
    await receiver.waitFor(path, 3);
    const listed = await deliveries(runId, (d) => d.deliveries[0]?.status === 'delivered');
    const attempts = listed.deliveries[0].attempts;
    assert.deepEqual(
      attempts.map((a: any) => a.status_code),
      [null, 429, 200],
    );
    assert.ok(attempts[0].error, 'the network error is recorded');
  });

  it('stops at a 400: one attempt, the delivery failed with the reason, its workflow ended', async () => {
    const wf = await workflow(pure);
    const path = '/hooks/refusing';
    receiver.script(path, 400, 400, 400);
    const runId = (
      await engine.http.post(`/wf/${wf}/start_run/`, {
        initial_inputs: { in: { x: 1 } },
        callback: { url: `${receiver.url}${path}`, secret: SECRET },
      })
    ).body.id as string;
    await receiver.waitFor(path, 1);
    // The delivery's workflow has ended: no attempt can follow.
    const outcome = await engine.api.temporal.workflow
      .getHandle(callbackWorkflowId(engine.api.config.temporal.workflowIdPrefix, `${runId}:run.completed:1`))
      .result();
    assert.equal(outcome, 'failed');
    assert.equal(receiver.received.filter((r) => r.path === path).length, 1);
    const listed = await deliveries(runId, (d) => d.deliveries[0]?.status === 'failed');
    assert.deepEqual(
      listed.deliveries[0].attempts.map((a: any) => a.status_code),
      [400],
    );
    assert.match(listed.deliveries[0].reason, /400/);
    assert.equal((await engine.http.get(`/run/${runId}/`)).body.status, 'COMPLETED', 'the run is not affected');
  });

  it('announces a human pause (run.paused) and then the end; a cancelled run gets run.canceled', async () => {
    const wf = await workflow(gated);
    const path = '/hooks/pause';
    const callback = {
      url: `${receiver.url}${path}`,
      secret: SECRET,
      events: ['run.paused', 'run.completed', 'run.canceled'],
    };
    const runId = (await engine.http.post(`/wf/${wf}/start_run/`, { initial_inputs: { in: { x: 5 } }, callback })).body
      .id as string;
    const [paused] = await receiver.waitFor(path, 1);
    assert.ok(paused && validSignature(SECRET, paused));
    assert.equal(paused.body.event, 'run.paused');
    assert.equal(paused.headers['x-spur-event-id'], `${runId}:run.paused:gate:1`);
    assert.equal(paused.body.run.status, 'PAUSED');
    assert.equal(paused.body.run.tasks.find((t: any) => t.node_id === 'gate').status, 'PAUSED');
    const act = await engine.http.post(`/wf/process_pause_action/${runId}/`, {
      action: 'APPROVE',
      user_id: 'alice',
      inputs: {},
    });
    assert.equal(act.status, 200, JSON.stringify(act.body));
    const [, completed] = await receiver.waitFor(path, 2);
    assert.equal(completed?.body.event, 'run.completed');
    assert.equal(completed?.body.run.status, 'COMPLETED');
    const listed = await deliveries(
      runId,
      (d) => d.deliveries.length === 2 && d.deliveries.every((x: any) => x.status === 'delivered'),
    );
    assert.deepEqual(listed.deliveries.map((d: any) => d.event).sort(), ['run.completed', 'run.paused']);

    const other = (
      await engine.http.post(`/wf/${wf}/start_run/`, {
        initial_inputs: { in: { x: 6 } },
        callback: { ...callback, url: `${receiver.url}${path}/2` },
      })
    ).body.id as string;
    await receiver.waitFor(`${path}/2`, 1);
    assert.equal((await engine.http.post(`/wf/cancel_workflow/${other}/`)).status, 200);
    const [, canceled] = await receiver.waitFor(`${path}/2`, 2);
    assert.equal(canceled?.body.event, 'run.canceled');
    assert.equal(canceled?.body.run.status, 'CANCELED');
  });

  it('start_batch_run takes a callback: the batch parent announces its end', async () => {
    const wf = await workflow(pure);
    const fd = new FormData();
    fd.append('file', new Blob(['x\na\nb\n'], { type: 'text/csv' }), 'rows.csv');
    const ds = await engine.http.post('/ds/?name=cb-rows', fd);
    assert.equal(ds.status, 200, JSON.stringify(ds.body));
    const path = '/hooks/batch';
    const parent = await engine.http.post(`/wf/${wf}/start_batch_run/`, {
      dataset_id: ds.body.id,
      callback: { url: `${receiver.url}${path}`, secret: SECRET },
    });
    assert.equal(parent.status, 200, JSON.stringify(parent.body));
    const [hit] = await receiver.waitFor(path, 1);
    assert.ok(hit && validSignature(SECRET, hit));
    assert.equal(hit.body.event, 'run.completed');
    assert.equal(hit.body.run.id, parent.body.id);
    assert.equal(hit.body.run.run_type, 'batch');
    assert.equal(hit.body.run.percentage_complete, 100);
  });

  it('the deliveries route answers 404 for an unknown run and an empty list for a run without callback', async () => {
    assert.equal((await engine.http.get('/run/R999999/callbacks/')).status, 404);
    const wf = await workflow(pure);
    const runId = (await engine.http.post(`/wf/${wf}/start_run/`, { initial_inputs: { in: { x: 1 } } })).body
      .id as string;
    await waitForRun(engine.http, runId);
    assert.deepEqual((await engine.http.get(`/run/${runId}/callbacks/`)).body, {
      run_id: runId,
      callback: null,
      deliveries: [],
    });
  });

  it('lists a delivery whose first attempt is still under way as pending, with no attempts yet', async () => {
    const wf = await workflow(pure);
    const path = '/hooks/held';
    const release = receiver.hold(path);
    const runId = (
      await engine.http.post(`/wf/${wf}/start_run/`, {
        initial_inputs: { in: { x: 1 } },
        callback: { url: `${receiver.url}${path}`, secret: SECRET },
      })
    ).body.id as string;
    await receiver.waitFor(path, 1); // the POST arrived and waits for its answer
    const during = await engine.http.get(`/run/${runId}/callbacks/`);
    release();
    assert.equal(during.status, 200, JSON.stringify(during.body));
    assert.deepEqual(
      during.body.deliveries.map((d: any) => [d.id, d.status, d.reason, d.attempts]),
      [[`${runId}:run.completed:1`, 'pending', null, []]],
    );
    const after = await deliveries(runId, (d) => d.deliveries[0]?.status === 'delivered');
    assert.deepEqual(
      after.deliveries[0].attempts.map((a: any) => [a.attempt, a.status_code]),
      [[1, 200]],
    );
  });
});

describe('e2e: a callback delivery gives up after SPUR_CALLBACK_RETRY_HOURS', function () {
  this.timeout(120_000);
  let engine: Engine;
  let receiver: CallbackReceiver;
  before(async () => {
    receiver = await startCallbackReceiver();
    // 0.001 h: about 3.6 s of retries, then the delivery is given up.
    engine = await startEngine({
      SPUR_OUTBOUND_ALLOW_PRIVATE: 'true',
      SPUR_CALLBACK_RETRY_HOURS: '0.001',
      SPUR_CALLBACK_RETRY_FIRST_SECONDS: '0.2',
      SPUR_CALLBACK_RETRY_MAX_SECONDS: '0.5',
    });
  });
  after(async () => {
    await engine?.close();
    await receiver?.close();
  });

  it('a receiver that keeps answering 503 gets retried until the limit, then the delivery is failed; the run is not', async () => {
    const wf = (await engine.http.post('/wf/', { name: 'cb-give-up', definition: pure })).body.id as string;
    const path = '/hooks/down';
    receiver.script(path, ...Array.from({ length: 1000 }, () => 503));
    const runId = (
      await engine.http.post(`/wf/${wf}/start_run/`, {
        initial_inputs: { in: { x: 1 } },
        callback: { url: `${receiver.url}${path}`, secret: SECRET },
      })
    ).body.id as string;
    await receiver.waitFor(path, 1); // the delivery's workflow exists from then on
    const outcome = await engine.api.temporal.workflow
      .getHandle(callbackWorkflowId(engine.api.config.temporal.workflowIdPrefix, `${runId}:run.completed:1`))
      .result();
    assert.equal(outcome, 'failed');
    const listed = (await engine.http.get(`/run/${runId}/callbacks/`)).body;
    const [delivery] = listed.deliveries;
    assert.equal(delivery.status, 'failed');
    assert.ok(delivery.attempts.length >= 2, JSON.stringify(delivery.attempts));
    assert.ok(delivery.attempts.every((a: any) => a.status_code === 503));
    assert.ok(delivery.reason, 'the reason it stopped is recorded');
    assert.equal((await engine.http.get(`/run/${runId}/`)).body.status, 'COMPLETED');
  });
});

describe('e2e: a callback attempt that ends after its delivery was given up', function () {
  this.timeout(60_000);
  let api: TestApi;
  before(async () => {
    api = await startApi();
  });
  after(() => api?.close());

  it('is listed with the others, and the delivery stays failed', async () => {
    const http = client(api.baseUrl);
    const wf = (await http.post('/wf/', { name: 'cb-late', definition: pure })).body.id as string;
    const runId = (await http.post(`/wf/${wf}/start_run/`, { initial_inputs: { in: { x: 1 } } })).body.id as string;
    // What the delivery workflow and a straggling attempt of its activity write, in the order a
    // time limit can put them: the give-up first, the attempt's record after it.
    const deliveries = createCallbackDeliveries(api.models);
    const key = { deliveryId: `${runId}:run.completed:1`, runId, event: 'run.completed', url: 'https://example.org/h' };
    await deliveries.open(key);
    const attempt = (n: number) => ({ attempt: n, time: new Date(), status_code: 503, error: null, duration_ms: 5 });
    await deliveries.recordAttempt(key, attempt(1), 'pending', 'the receiver answered 503');
    await deliveries.giveUp(key.deliveryId, 'gave up after 0.001 h');
    await deliveries.recordAttempt(key, attempt(2), 'pending', 'the receiver answered 503');
    const [delivery] = (await http.get(`/run/${runId}/callbacks/`)).body.deliveries;
    assert.equal(delivery.status, 'failed');
    assert.equal(delivery.reason, 'gave up after 0.001 h');
    assert.deepEqual(
      delivery.attempts.map((a: { attempt: number }) => a.attempt),
      [1, 2],
    );
  });
});

describe('e2e: callback addresses without SPUR_OUTBOUND_ALLOW_PRIVATE', function () {
  this.timeout(60_000);
  let api: TestApi;
  let http: ReturnType<typeof client>;
  before(async () => {
    api = await startApi({ SPUR_OUTBOUND_ALLOW_PRIVATE: 'false' }); // the production default
    http = client(api.baseUrl);
  });
  after(() => api?.close());

  it('refuses loopback callback urls (literal or by name), other schemes and unknown events with 422, before any run exists', async () => {
    const wf = (await http.post('/wf/', { name: 'cb-refused', definition: pure })).body.id as string;
    const cases: Array<[string, Record<string, unknown>, Array<string | number>]> = [
      ['start_run', { url: 'http://127.0.0.1:9/hook', secret: SECRET }, ['body', 'callback', 'url']],
      ['run', { url: 'http://[::1]:9/hook', secret: SECRET }, ['body', 'callback', 'url']],
      ['start_run', { url: 'http://localhost:9/hook', secret: SECRET }, ['body', 'callback', 'url']],
      ['start_run', { url: 'http://[::ffff:127.0.0.1]:9/hook', secret: SECRET }, ['body', 'callback', 'url']],
      ['start_run', { url: 'ftp://127.0.0.1/hook', secret: SECRET }, ['body', 'callback', 'url']],
      [
        'start_run',
        { url: 'http://127.0.0.1:9/hook', secret: SECRET, events: ['run.exploded'] },
        ['body', 'callback', 'events', 0],
      ],
      ['start_run', { url: 'http://127.0.0.1:9/hook' }, ['body', 'callback', 'secret']],
    ];
    for (const [route, callback, loc] of cases) {
      const res = await http.post(`/wf/${wf}/${route}/`, { initial_inputs: { in: { x: 1 } }, callback });
      assert.equal(res.status, 422, `${route} ${JSON.stringify(callback)}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body.detail[0].loc, loc, JSON.stringify(res.body));
    }
    assert.match(
      (
        await http.post(`/wf/${wf}/start_run/`, {
          initial_inputs: { in: { x: 1 } },
          callback: { url: 'http://127.0.0.1:9/', secret: SECRET },
        })
      ).body.detail[0].msg,
      /loopback.*SPUR_OUTBOUND_ALLOW_PRIVATE/,
    );
    assert.deepEqual((await http.get('/run/')).body, [], 'no run was recorded');
  });

  it('refuses a loopback callback on a schedule or a webhook trigger with 422 naming it, saving neither', async () => {
    const wf = (await http.post('/wf/', { name: 'cb-refused-triggers', definition: pure })).body.id as string;
    const callback = { url: 'http://127.0.0.1:9/hook', secret: SECRET };
    const schedule = await http.post(`/wf/${wf}/schedules/`, {
      interval_seconds: 60,
      initial_inputs: { in: { x: 1 } },
      callback,
    });
    const trigger = await http.post(`/wf/${wf}/triggers/`, { name: 'refused', callback });
    for (const res of [schedule, trigger]) {
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.deepEqual(res.body.detail[0].loc, ['body', 'callback', 'url']);
    }
    assert.deepEqual((await http.get(`/wf/${wf}/schedules/`)).body, []);
    assert.deepEqual((await http.get(`/wf/${wf}/triggers/`)).body, []);
    // Nor can a saved one be changed to point there.
    const saved = await http.post(`/wf/${wf}/schedules/`, {
      interval_seconds: 60,
      paused: true,
      initial_inputs: { in: { x: 1 } },
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const changed = await http.put(`/schedules/${saved.body.id}/`, { callback });
    assert.equal(changed.status, 422, JSON.stringify(changed.body));
    assert.equal((await http.get(`/schedules/${saved.body.id}/`)).body.callback, null);
    assert.equal((await http.delete(`/wf/${wf}/`)).status, 204);
  });

  it('documents the callback field, the deliveries route and the signature scheme in OpenAPI', async () => {
    const doc = (await http.get('/openapi.json')).body;
    const callback = doc.components.schemas.RunCallback;
    assert.deepEqual(Object.keys(callback.properties).sort(), ['events', 'secret', 'url']);
    assert.match(callback.description, /X-Spur-Signature: sha256=<hex HMAC-SHA256 of the raw request body/);
    assert.deepEqual(callback.properties.events.items.enum, [
      'run.completed',
      'run.failed',
      'run.canceled',
      'run.paused',
    ]);
    for (const path of [
      '/wf/{workflow_id}/run/',
      '/wf/{workflow_id}/start_run/',
      '/wf/{workflow_id}/start_batch_run/',
    ]) {
      const body = doc.paths[path].post.requestBody.content['application/json'].schema;
      const schema = body.$ref ? doc.components.schemas[body.$ref.split('/').pop()] : body;
      assert.deepEqual(schema.properties.callback, { $ref: '#/components/schemas/RunCallback' }, path);
    }
    const route = doc.paths['/run/{run_id}/callbacks/'].get;
    assert.match(route.description, /X-Spur-Event-Id/);
    assert.ok(route.responses['404']);
    assert.equal(route.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/RunCallbacks');
  });
});
