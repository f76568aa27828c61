import assert from 'node:assert/strict';
import { startEngine, waitForRun, type Engine } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { FINAL_EVENT_NAMES, assertWholeStream, openSse, type SseEvent } from '../support/sse';

/** in → gate (human) → after; in → side. */
const gated = {
  nodes: [
    input(),
    n('gate', 'HumanInterventionNode', { message: 'Check' }),
    n('after', 'OutputNode'),
    n('side', 'OutputNode', { output_map: { x: 'in.x' } }),
  ],
  links: [l('in', 'gate'), l('gate', 'after'), l('in', 'side')],
};

const names = (events: SseEvent[]) => events.map((e) => e.event);

describe('e2e: run event stream (GET /run/{id}/events/)', function () {
  this.timeout(120_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine({ SPUR_EVENT_STREAM_KEEPALIVE_SECONDS: '0.2', SPUR_EVENT_STREAM_POLL_MS: '50' });
  });
  after(() => engine?.close());
  const url = (runId: string, query = '') => `${engine.api.baseUrl}/run/${runId}/events/${query}`;

  async function pausedRun() {
    const wf = (await engine.http.post('/wf/', { name: `events-${Math.random()}`, definition: gated })).body;
    const res = await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'v' } } });
    assert.equal(res.status, 200);
    return res.body.id as string;
  }

  it('sends every event of a run in order, with keep-alives while it waits, and ends after the final one', async () => {
    const runId = await pausedRun();
    const stream = await openSse(url(runId));
    assert.equal(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    await stream.waitFor((es) => es.some((e) => e.event === 'run.paused'));
    await stream.waitFor(() => stream.comments.includes('keep-alive'));
    const act = await engine.http.post(`/wf/process_pause_action/${runId}/`, {
      action: 'APPROVE',
      user_id: 'alice',
      inputs: { note: 'ok' },
    });
    assert.equal(act.status, 200, JSON.stringify(act.body));
    assert.equal(await stream.ended, true, 'the server ends the stream');
    const events = stream.events;
    assertWholeStream(events);
    const seq = names(events);
    assert.equal(seq[0], 'run.status');
    assert.ok(seq.indexOf('run.paused') < seq.indexOf('run.resumed'), seq.join(' '));
    const paused = events.find((e) => e.event === 'run.paused') as SseEvent;
    assert.equal(paused.data.pause.node_id, 'gate');
    assert.deepEqual(paused.data.pause.input_data, { in: { x: 'v' } });
    const resumed = events.find((e) => e.event === 'run.resumed') as SseEvent;
    assert.equal(resumed.data.resume_action, 'APPROVE');
    assert.equal(resumed.data.resume_user_id, 'alice');
    const completed = events
      .filter((e) => e.event === 'task.completed')
      .map((e) => e.data.node_id)
      .sort();
    assert.deepEqual(completed, ['after', 'gate', 'in', 'side']);
    const gate = events.find((e) => e.event === 'task.completed' && e.data.node_id === 'gate') as SseEvent;
    assert.deepEqual(gate.data.outputs, { in: { x: 'v' }, note: 'ok' });
    for (const node of ['in', 'gate', 'after', 'side']) {
      assert.ok(
        seq.findIndex((_, i) => events[i]?.event === 'task.started' && events[i]?.data.node_id === node) <
          seq.findIndex((_, i) => events[i]?.event === 'task.completed' && events[i]?.data.node_id === node),
        `${node} started before it completed`,
      );
    }
    const statuses = events.filter((e) => e.event === 'run.status').map((e) => e.data.status);
    // The pure nodes before the gate are saved with the pause: the record goes PENDING → PAUSED at once.
    assert.deepEqual(statuses, ['PAUSED', 'RUNNING', 'COMPLETED']);
    assert.equal(events.at(-1)?.event, 'run.completed');
    assert.equal(events.at(-1)?.data.percentage_complete, 100);

    // A finished run's stream replays it all and ends at once; ?after=N replays what follows N.
    const replay = await openSse(url(runId));
    assert.equal(await replay.ended, true);
    assert.deepEqual(
      replay.events.map(({ id, event, data }) => ({ id, event, data })),
      events.map(({ id, event, data }) => ({ id, event, data })),
    );
    const tail = await openSse(url(runId, '?after=3'));
    assert.equal(await tail.ended, true);
    assert.deepEqual(
      tail.events.map((e) => e.id),
      events.slice(3).map((e) => e.id),
    );
    // One that already has the final event gets nothing more.
    const done = await openSse(url(runId), { 'Last-Event-ID': String(events.length) });
    assert.equal(await done.ended, true);
    assert.deepEqual(done.events, []);
  });

  it('a client that disconnects mid-run and reconnects with Last-Event-ID misses nothing and gets nothing twice', async () => {
    const runId = await pausedRun();
    const first = await openSse(url(runId));
    await first.waitFor((es) => es.some((e) => e.event === 'run.paused'));
    first.close();
    const seen = [...first.events];
    const declined = await engine.http.post(`/wf/process_pause_action/${runId}/`, {
      action: 'DECLINE',
      user_id: 'bob',
      inputs: {},
      comments: 'no',
    });
    assert.equal(declined.status, 200, JSON.stringify(declined.body));
    await waitForRun(engine.http, runId, (r) => r.status === 'CANCELED');
    const second = await openSse(url(runId), { 'Last-Event-ID': String(seen.at(-1)?.id) });
    assert.equal(await second.ended, true);
    const all = [...seen, ...second.events];
    assertWholeStream(all);
    assert.equal(all.at(-1)?.event, 'run.canceled');
    assert.match(String(all.at(-1)?.data.message), /Declined by bob/);
  });

  it('many subscribers of one run share one watcher, released when they leave', async () => {
    const runId = await pausedRun();
    const streams = await Promise.all(Array.from({ length: 20 }, () => openSse(url(runId))));
    await Promise.all(streams.map((s) => s.waitFor((es) => es.some((e) => e.event === 'run.paused'))));
    const hub = engine.api.services.runEvents;
    assert.deepEqual(hub.stats(), { watchers: 1, streams: 20 });
    for (const s of streams) s.close();
    const deadline = Date.now() + 30_000;
    while (hub.stats().streams > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(hub.stats(), { watchers: 0, streams: 0 }, 'no watcher left behind');
  });

  it('a workflow deleted mid-stream takes its run and events along: the stream ends (with the run cancelled, if it saw that), and the run is then a 404', async () => {
    const wf = (await engine.http.post('/wf/', { name: `deleted-${Math.random()}`, definition: gated })).body;
    const runId = (await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'v' } } })).body
      .id as string;
    const stream = await openSse(url(runId));
    await stream.waitFor((es) => es.some((e) => e.event === 'run.paused'));
    assert.equal((await engine.http.delete(`/wf/${wf.id}/`)).status, 204);
    assert.equal(await stream.ended, true, 'the server ends the stream of a deleted run');
    // The delete cancels the run before removing it: a stream that looked in between saw it cancelled.
    const finals = stream.events.filter((e) => FINAL_EVENT_NAMES.includes(e.event)).map((e) => e.event);
    assert.ok(
      finals.every((e) => e === 'run.canceled'),
      `only the run's own cancel ends it: ${finals.join(' ')}`,
    );
    assert.equal(
      await engine.api.models.RunEvent.countDocuments({ run_id: runId }),
      0,
      'its events are deleted with it',
    );
    assert.equal((await openSse(url(runId))).status, 404);
  });

  it('answers 404 for an unknown run and 422 for a Last-Event-ID that is not a number', async () => {
    const missing = await openSse(url('R999999'));
    assert.equal(missing.status, 404);
    await missing.ended;
    assert.deepEqual(JSON.parse(missing.body()), { detail: 'Run not found' });
    const runId = await pausedRun();
    const bad = await openSse(url(runId), { 'Last-Event-ID': 'abc' });
    assert.equal(bad.status, 422);
    await bad.ended;
  });

  it('a run that ended without any stored event streams its final event and ends', async () => {
    const wf = (await engine.http.post('/wf/', { name: 'eventless run', definition: gated })).body;
    await engine.api.models.Run.create({
      _id: 'R800001',
      seq: 800_001,
      workflow_id: wf.id,
      status: 'FAILED',
      message: 'old failure',
      start_time: new Date(),
      end_time: new Date(),
      run_type: 'interactive',
      initial_inputs: '{}',
      outputs: null,
    });
    const stream = await openSse(url('R800001'));
    assert.equal(await stream.ended, true);
    assert.deepEqual(
      stream.events.map(({ id, event, data }) => ({ id, event, data })),
      [
        {
          id: 1,
          event: 'run.failed',
          data: { run_id: 'R800001', status: 'FAILED', message: 'old failure', percentage_complete: 0 },
        },
      ],
    );
  });

  it('a batch parent reports batch.progress up to all rows, then ends; an inline row has its final event', async () => {
    const code = ['import time', 'time.sleep(0.3)', 'return {"y": "row-" + input_model["in"]["x"]}'].join('\n');
    const definition = {
      nodes: [
        input(),
        n('py', 'PythonFuncNode', { code, output_schema: { y: 'string' } }),
        n('out', 'OutputNode', { output_map: { y: 'py.y' } }),
      ],
      links: [l('in', 'py'), l('py', 'out')],
    };
    const wf = (await engine.http.post('/wf/', { name: 'batch-events', definition })).body;
    const fd = new FormData();
    fd.append(
      'file',
      new Blob([['x', ...Array.from({ length: 12 }, (_, i) => String(i))].join('\n')], { type: 'text/csv' }),
      'rows.csv',
    );
    const ds = (await engine.http.post('/ds/?name=batch-events', fd)).body;
    const parent = (await engine.http.post(`/wf/${wf.id}/start_batch_run/`, { dataset_id: ds.id, mini_batch_size: 2 }))
      .body;
    const stream = await openSse(url(parent.id));
    // Bounded inside the test's timeout, so a batch that stalls says how far it got.
    await stream
      .waitFor((es) => es.some((e) => e.event === 'run.completed'), 90_000)
      .catch(async (err: Error) => {
        const run = (await engine.http.get(`/run/${parent.id}/`)).body;
        throw new Error(`${err.message}; the parent is ${run.status} at ${run.percentage_complete}%`);
      });
    assert.equal(await stream.ended, true);
    assertWholeStream(stream.events);
    const progress = stream.events.filter((e) => e.event === 'batch.progress').map((e) => e.data);
    assert.ok(progress.length >= 1, names(stream.events).join(' '));
    for (let i = 1; i < progress.length; i++)
      assert.ok(progress[i]?.rows_done > progress[i - 1]?.rows_done, 'progress only grows');
    assert.deepEqual(progress.at(-1), { run_id: parent.id, rows_total: 12, rows_done: 12, rows_failed: 0 });
    assert.equal(stream.events.at(-1)?.event, 'run.completed');

    const row = (await engine.http.get(`/run/?parent_only=false&page_size=100`)).body.find(
      (r: { parent_run_id: string | null }) => r.parent_run_id === parent.id,
    );
    const rowStream = await openSse(url(row.id));
    assert.equal(await rowStream.ended, true);
    assert.deepEqual(names(rowStream.events), ['run.status', 'run.completed']);
  });
});
