import assert from 'node:assert/strict';
import path from 'node:path';
import { ScheduleNotFoundError } from '@temporalio/client';
import { onFreePort } from '../../scripts/lib/ports';
import { TEMPORAL_DEV_OPTIONS, startTemporal, type TemporalServer } from '../../scripts/lib/servers';
import { scheduleTemporalId } from '../../src/contracts/schedule-contract';
import { WorkflowType } from '../../src/contracts/workflow-names';
import { startApi, type TestApi } from '../support/api';
import { startCallbackReceiver, validSignature, type CallbackReceiver } from '../support/callback-receiver';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { eventually } from '../support/python-runs';
import { l, n } from '../support/graphs';
import { client } from '../support/http';
import { stack } from '../support/stack';
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay';
import { startWorker, type TestWorker } from '../support/worker';

type Http = ReturnType<typeof client>;
interface Run {
  id: string;
  status: string;
  run_type: string;
  start_time: string;
  end_time: string | null;
  message: string | null;
  initial_inputs: Record<string, Record<string, unknown>>;
  outputs: Record<string, Record<string, unknown>> | null;
  trigger: { kind: string; id: string; scheduled_time: string | null; delivery_id: string | null } | null;
}

/** in(x) → out(x): a run that ends in milliseconds. */
const echo = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('out', 'OutputNode', { output_map: { x: 'in.x' } }),
  ],
  links: [l('in', 'out')],
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The shortest interval a schedule may have (a shorter one is 422): the tests that wait for fires use it. */
const MIN_INTERVAL = 10;
/** Long enough for two fires of MIN_INTERVAL on a loaded machine. */
const TWO_FIRES_MS = 60_000;

async function runsOf(http: Http, workflowId: string): Promise<Run[]> {
  const res = await http.get(`/wf/${workflowId}/runs/?page_size=100`);
  assert.equal(res.status, 200, res.text);
  return res.body as Run[];
}

/** Every run of the schedule in /run/?run_type=scheduled, paged through. */
async function scheduledRunsOf(http: Http, scheduleId: string): Promise<Run[]> {
  const found: Run[] = [];
  for (let page = 1; ; page++) {
    const res = await http.get(`/run/?run_type=scheduled&page_size=100&page=${page}`);
    assert.equal(res.status, 200, res.text);
    const runs = res.body as Run[];
    found.push(...runs.filter((r) => r.trigger?.id === scheduleId));
    if (runs.length < 100) return found;
  }
}

async function newWorkflow(http: Http, name: string, definition: unknown = echo): Promise<string> {
  const res = await http.post('/wf/', { name: `${name}-${Date.now()}`, definition });
  assert.equal(res.status, 200, res.text);
  return res.body.id as string;
}

async function temporalScheduleExists(api: TestApi, scheduleId: string): Promise<boolean> {
  const id = scheduleTemporalId(scheduleId, api.env.SPUR_WORKFLOW_ID_PREFIX as string);
  try {
    await api.temporal.schedule.getHandle(id).describe();
    return true;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return false;
    throw err;
  }
}

describe('e2e: schedules start runs by themselves, durably', function () {
  this.timeout(120_000);
  let engine: Engine;
  let receiver: CallbackReceiver;
  before(async () => {
    receiver = await startCallbackReceiver();
    engine = await startEngine();
  });
  after(async () => {
    await engine?.close();
    await receiver?.close();
  });

  it('an interval schedule fires runs with its inputs and trigger; pause stops it, trigger-now runs once, unpause resumes; the workflow delete removes its Temporal Schedule', async () => {
    const { http, api } = engine;
    const wf = await newWorkflow(http, 'every second');
    const created = await http.post(`/wf/${wf}/schedules/`, {
      interval_seconds: MIN_INTERVAL,
      initial_inputs: { in: { x: 'tick' } },
      note: 'heartbeat',
    });
    assert.equal(created.status, 200, created.text);
    const sc = created.body;
    assert.match(sc.id, /^SC\d+$/);
    assert.equal(sc.overlap, 'skip');
    assert.equal(sc.timezone, 'UTC');
    assert.equal(sc.version, 'latest');
    assert.ok(sc.next_run_times.length >= 1 && sc.next_run_times.length <= 5, JSON.stringify(sc.next_run_times));
    assert.ok(await temporalScheduleExists(api, sc.id), 'a Temporal Schedule exists');

    const fired = await eventually(
      'two scheduled runs completed',
      async () => {
        const runs = (await runsOf(http, wf)).filter((r) => r.status === 'COMPLETED');
        return runs.length >= 2 ? runs : undefined;
      },
      TWO_FIRES_MS,
    );
    for (const run of fired) {
      assert.equal(run.run_type, 'scheduled');
      assert.deepEqual(run.initial_inputs, { in: { x: 'tick' } });
      assert.deepEqual(run.outputs?.out, { x: 'tick' });
      assert.equal(run.trigger?.kind, 'schedule');
      assert.equal(run.trigger?.id, sc.id);
      assert.ok(run.trigger?.scheduled_time && !Number.isNaN(Date.parse(run.trigger.scheduled_time)));
    }
    const times = fired.map((r) => r.trigger?.scheduled_time);
    assert.equal(new Set(times).size, times.length, 'one run per fire time');
    const listed = (await http.get('/run/?run_type=scheduled&page_size=100')).body as Run[];
    assert.ok(
      fired.every((r) => listed.some((x) => x.id === r.id)),
      'listed by /run/?run_type=scheduled',
    );

    const paused = await http.post(`/schedules/${sc.id}/pause/`, {});
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.body.paused, true);
    assert.deepEqual(paused.body.next_run_times, []);
    await sleep(1500); // a fire already under way records its run
    const atPause = (await runsOf(http, wf)).length;
    await sleep(MIN_INTERVAL * 1000 + 1000); // a whole interval: a fire would have come
    assert.equal((await runsOf(http, wf)).length, atPause, 'no run while paused');

    const now = await http.post(`/schedules/${sc.id}/trigger/`, {});
    assert.equal(now.status, 200, now.text);
    assert.equal(now.body.run_type, 'scheduled');
    assert.equal(now.body.trigger.id, sc.id);
    const triggered = await waitForRun(http, now.body.id);
    assert.equal(triggered.status, 'COMPLETED');
    await sleep(1500);
    assert.equal((await runsOf(http, wf)).length, atPause + 1, 'trigger-now ran once, and the schedule stayed paused');

    assert.equal((await http.post(`/schedules/${sc.id}/unpause/`, {})).status, 200);
    await until('runs again after unpause', async () => (await runsOf(http, wf)).length >= atPause + 2);
    const shown = (await http.get(`/schedules/${sc.id}/`)).body;
    assert.ok(
      shown.recent_runs.some((r: { run_id: string }) => r.run_id === now.body.id),
      'recent_runs',
    );

    assert.equal((await http.delete(`/wf/${wf}/`)).status, 204);
    assert.equal(await temporalScheduleExists(api, sc.id), false, 'the Temporal Schedule is gone');
    assert.equal((await http.get(`/schedules/${sc.id}/`)).status, 404);
  });

  it("calls back a fired run: run.completed with the run's id, signed with the schedule's callback secret, which no answer shows", async () => {
    const { http } = engine;
    const secret = 'callback-secret-of-the-schedule-9e1b';
    const path = '/hooks/schedule-callback';
    const wf = await newWorkflow(http, 'called back');
    const created = await http.post(`/wf/${wf}/schedules/`, {
      interval_seconds: MIN_INTERVAL,
      initial_inputs: { in: { x: 'cb' } },
      callback: { url: `${receiver.url}${path}`, secret },
    });
    assert.equal(created.status, 200, created.text);
    const sc = created.body;
    assert.deepEqual(sc.callback, {
      url: `${receiver.url}${path}`,
      events: ['run.completed', 'run.failed', 'run.canceled'],
    });
    const [hit] = await receiver.waitFor(path, 1);
    assert.equal((await http.post(`/schedules/${sc.id}/pause/`, {})).status, 200);
    assert.ok(hit);
    const runId = hit.body.run.id as string;
    assert.equal(hit.headers['x-spur-event'], 'run.completed');
    assert.equal(hit.headers['x-spur-event-id'], `${runId}:run.completed:1`);
    assert.ok(validSignature(secret, hit), 'signed with the callback secret');
    const run = (await http.get(`/run/${runId}/`)).body as Run;
    assert.equal(run.run_type, 'scheduled');
    assert.equal(run.trigger?.id, sc.id);
    assert.deepEqual(run.outputs?.out, { x: 'cb' });
    const kept = await http.put(`/schedules/${sc.id}/`, { note: 'still called back' });
    for (const answer of [
      created,
      kept,
      await http.get(`/schedules/${sc.id}/`),
      await http.get(`/wf/${wf}/schedules/`),
    ]) {
      assert.equal(answer.status, 200, answer.text);
      assert.ok(!answer.text.includes(secret), answer.text);
    }
    assert.equal(kept.body.callback.url, `${receiver.url}${path}`, 'a PUT that leaves it out keeps it');
    const stored = await engine.api.models.Schedule.findById(sc.id).lean();
    assert.ok(!JSON.stringify(stored).includes(secret), 'stored sealed');
    assert.equal((await http.put(`/schedules/${sc.id}/`, { callback: null })).body.callback, null);
    assert.equal((await http.delete(`/wf/${wf}/`)).status, 204);
  });

  it('backfill starts a run for every fire time in the range, with those times', async () => {
    const { http } = engine;
    const wf = await newWorkflow(http, 'backfill');
    const sc = (
      await http.post(`/wf/${wf}/schedules/`, {
        interval_seconds: 60,
        overlap: 'allow_all',
        initial_inputs: { in: { x: 'past' } },
      })
    ).body;
    // Five whole minutes, from half a minute past one, ten minutes ago.
    const start = Math.floor(Date.now() / 60_000) * 60_000 - 600_000 + 30_000;
    const end = start + 300_000;
    const res = await http.post(`/schedules/${sc.id}/backfill/`, {
      start_time: new Date(start).toISOString(),
      end_time: new Date(end).toISOString(),
    });
    assert.equal(res.status, 202, res.text);
    const expected = [1, 2, 3, 4, 5].map((i) => new Date(start - 30_000 + i * 60_000).toISOString());
    const backfilled = await eventually('five backfilled runs completed', async () => {
      const runs = (await runsOf(http, wf)).filter(
        (r) => r.status === 'COMPLETED' && Date.parse(r.trigger?.scheduled_time ?? '') < end,
      );
      return runs.length >= 5 ? runs : undefined;
    });
    assert.deepEqual(backfilled.map((r) => r.trigger?.scheduled_time).sort(), expected);
    assert.equal((await http.delete(`/wf/${wf}/`)).status, 204);
  });

  it('lists schedules oldest first, of one workflow with ?workflow_id= (an unknown one is 404), a page at a time', async () => {
    const { http } = engine;
    const [wfA, wfB] = [await newWorkflow(http, 'list a'), await newWorkflow(http, 'list b')];
    const saved: string[] = [];
    for (const wf of [wfA, wfB, wfA]) {
      const res = await http.post(`/wf/${wf}/schedules/`, {
        interval_seconds: 3600,
        paused: true,
        initial_inputs: { in: { x: 'listed' } },
      });
      assert.equal(res.status, 200, res.text);
      saved.push(res.body.id as string);
    }
    const [a1, b1, a2] = saved as [string, string, string];
    const ids = (res: { status: number; text: string; body: unknown }) => {
      assert.equal(res.status, 200, res.text);
      return (res.body as Array<{ id: string }>).map((sc) => sc.id);
    };
    const all = ids(await http.get('/schedules/?page_size=100'));
    assert.deepEqual(
      all.filter((id) => saved.includes(id)),
      [a1, b1, a2],
      'both workflows, oldest first',
    );
    assert.deepEqual(ids(await http.get(`/schedules/?workflow_id=${wfA}`)), [a1, a2]);
    assert.deepEqual(ids(await http.get(`/schedules/?workflow_id=${wfB}`)), [b1]);
    assert.deepEqual(ids(await http.get(`/wf/${wfA}/schedules/`)), [a1, a2]);
    assert.deepEqual(ids(await http.get('/schedules/?page_size=1&page=2')), [all[1]]);
    assert.deepEqual(ids(await http.get(`/schedules/?workflow_id=${wfA}&page_size=1&page=2`)), [a2]);
    assert.deepEqual(ids(await http.get(`/schedules/?workflow_id=${wfA}&page_size=1&page=3`)), []);
    assert.equal((await http.get('/schedules/?workflow_id=S999999')).status, 404);
    for (const wf of [wfA, wfB]) assert.equal((await http.delete(`/wf/${wf}/`)).status, 204);
  });

  it('answers 404 for every route of an unknown schedule or workflow, and a plain run has no trigger', async () => {
    const { http } = engine;
    const now = Date.now();
    const backfill = { start_time: new Date(now - 600_000).toISOString(), end_time: new Date(now).toISOString() };
    for (const [method, path, body] of [
      ['PUT', '/schedules/SC999999/', { note: 'x' }],
      ['DELETE', '/schedules/SC999999/', undefined],
      ['POST', '/schedules/SC999999/unpause/', {}],
      ['POST', '/schedules/SC999999/backfill/', backfill],
      ['GET', '/wf/S999999/schedules/', undefined],
    ] as const) {
      const res = await http.request(method, path, body);
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
    }
    const wf = await newWorkflow(http, 'plain');
    const started = await http.post(`/wf/${wf}/start_run/`, { initial_inputs: { in: { x: 'p' } } });
    assert.equal(started.status, 200, started.text);
    assert.equal(started.body.trigger, null);
    await waitForRun(http, started.body.id as string);
    const run = (await http.get(`/run/${started.body.id}/`)).body as Run;
    assert.equal(run.trigger, null);
    assert.equal(run.run_type, 'interactive');
    assert.equal((await http.delete(`/wf/${wf}/`)).status, 204);
  });

  it('describes every schedule route and method in the OpenAPI document', async () => {
    const doc = (await engine.http.get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    for (const [path, method] of [
      ['/wf/{workflow_id}/schedules/', 'post'],
      ['/wf/{workflow_id}/schedules/', 'get'],
      ['/schedules/', 'get'],
      ['/schedules/{schedule_id}/', 'get'],
      ['/schedules/{schedule_id}/', 'put'],
      ['/schedules/{schedule_id}/', 'delete'],
      ['/schedules/{schedule_id}/pause/', 'post'],
      ['/schedules/{schedule_id}/unpause/', 'post'],
      ['/schedules/{schedule_id}/trigger/', 'post'],
      ['/schedules/{schedule_id}/backfill/', 'post'],
    ] as const)
      assert.ok(doc.paths[path]?.[method], `${method} ${path}`);
  });

  it('a pinned schedule keeps running the definition it was saved with after the workflow changes', async () => {
    const { http } = engine;
    const wf = await newWorkflow(http, 'pinned');
    const sc = (
      await http.post(`/wf/${wf}/schedules/`, {
        interval_seconds: MIN_INTERVAL,
        paused: true,
        version: 'pinned',
        initial_inputs: { in: { x: 'p' } },
      })
    ).body as { id: string; pinned_version_id: string | null };
    assert.ok(sc.pinned_version_id);
    // Same input, another output: the new definition answers `y` where the pinned one answers `x`.
    const changed = {
      nodes: [
        n('in', 'InputNode', { output_schema: { x: 'string' } }),
        n('out', 'OutputNode', { output_map: { y: 'in.x' } }),
      ],
      links: [l('in', 'out')],
    };
    const put = await http.put(`/wf/${wf}/`, { name: `pinned-${Date.now()}`, definition: changed });
    assert.equal(put.status, 200, put.text);
    const plain = await http.post(`/wf/${wf}/run/`, { initial_inputs: { in: { x: 'p' } } });
    assert.deepEqual(plain.body.out, { y: 'p' }, 'a run of the workflow takes the new definition');
    assert.equal((await http.post(`/schedules/${sc.id}/unpause/`, {})).status, 200);
    const [fired] = await eventually(
      'a fired run completed',
      async () => {
        const runs = (await runsOf(http, wf)).filter((r) => r.run_type === 'scheduled' && r.status === 'COMPLETED');
        return runs.length >= 1 ? runs : undefined;
      },
      TWO_FIRES_MS,
    );
    assert.equal((await http.post(`/schedules/${sc.id}/pause/`, {})).status, 200);
    assert.deepEqual(fired?.outputs?.out, { x: 'p' }, 'the fire ran the pinned definition');
    assert.equal((await http.delete(`/wf/${wf}/`)).status, 204);
  });

  it('refuses bad schedules with 422 naming the field, unknown ids with 404, unfitting inputs with 400; none is saved', async () => {
    const { http } = engine;
    const wf = await newWorkflow(http, 'refusals');
    const inputs = { in: { x: 'a' } };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ cron: '61 * * * *', initial_inputs: inputs }, 422, 'cron'],
      [{ cron: '* * *', initial_inputs: inputs }, 422, 'cron'],
      [{ cron: '@sometimes', initial_inputs: inputs }, 422, 'cron'],
      [{ cron: '*/5 * * * *', interval_seconds: 5, initial_inputs: inputs }, 422, 'cron'],
      [{ initial_inputs: inputs }, 422, 'cron'],
      [{ interval_seconds: 0, initial_inputs: inputs }, 422, 'interval_seconds'],
      [{ interval_seconds: 9, initial_inputs: inputs }, 422, 'interval_seconds'],
      [{ interval_seconds: 10, timezone: 'Mars/Olympus', initial_inputs: inputs }, 422, 'timezone'],
      [{ interval_seconds: 10, overlap: 'sometimes', initial_inputs: inputs }, 422, 'overlap'],
      [{ interval_seconds: 10, initial_inputs: { nope: { x: 'a' } } }, 400, 'nope'],
    ];
    for (const [body, status, field] of cases) {
      const res = await http.post(`/wf/${wf}/schedules/`, body);
      assert.equal(res.status, status, `${JSON.stringify(body)} → ${res.status} ${res.text}`);
      assert.ok(res.text.includes(field), `${JSON.stringify(body)}: the answer names ${field}: ${res.text}`);
    }
    // Unknown fields, at the top or inside the callback, are refused by name: not silently ignored.
    const unknown: Array<[Record<string, unknown>, (string | number)[]]> = [
      [{ interval_seconds: 10, initial_inputs: inputs, secret: 's' }, ['body', 'secret']],
      [{ interval_seconds: 10, initial_inputs: inputs, interval: 60 }, ['body', 'interval']],
      [
        {
          interval_seconds: 10,
          initial_inputs: inputs,
          callback: { url: 'http://127.0.0.1:9/cb', secret: 'callback-secret', headers: { a: 'b' } },
        },
        ['body', 'callback', 'headers'],
      ],
    ];
    for (const [body, loc] of unknown) {
      const res = await http.post(`/wf/${wf}/schedules/`, body);
      assert.equal(res.status, 422, `${JSON.stringify(body)} → ${res.status} ${res.text}`);
      assert.deepEqual(
        (res.body.detail as Array<{ loc: unknown[] }>).map((d) => d.loc),
        [loc],
        res.text,
      );
    }
    assert.deepEqual((await http.get(`/wf/${wf}/schedules/`)).body, []);
    assert.equal(
      (await http.post('/wf/S999999/schedules/', { interval_seconds: 10, initial_inputs: inputs })).status,
      404,
    );
    for (const path of ['/schedules/SC999999/', '/schedules/SC999999/pause/', '/schedules/SC999999/trigger/']) {
      const res = path.endsWith('/SC999999/') ? await http.get(path) : await http.post(path, {});
      assert.equal(res.status, 404, `${path}: ${res.text}`);
    }
    const cron = await http.post(`/wf/${wf}/schedules/`, {
      cron: '30 9 * * mon-fri',
      timezone: 'Europe/Berlin',
      paused: true,
      initial_inputs: inputs,
    });
    assert.equal(cron.status, 200, cron.text);
    assert.deepEqual(cron.body.next_run_times, [], 'paused: no next times');
    const misspelt = await http.put(`/schedules/${cron.body.id}/`, { pasued: false });
    assert.equal(misspelt.status, 422, misspelt.text);
    assert.deepEqual(misspelt.body.detail[0].loc, ['body', 'pasued']);
    const backfillExtra = await http.post(`/schedules/${cron.body.id}/backfill/`, {
      start_time: '2024-01-01T00:00:00Z',
      end_time: '2024-01-02T00:00:00Z',
      overlap: 'allow_all',
    });
    assert.equal(backfillExtra.status, 422, backfillExtra.text);
    assert.deepEqual(backfillExtra.body.detail[0].loc, ['body', 'overlap']);
    assert.equal((await http.get(`/schedules/${cron.body.id}/`)).body.paused, true, 'the refused PUT changed nothing');
    const changed = await http.put(`/schedules/${cron.body.id}/`, { paused: false, interval_seconds: 3600 });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.cron, null, 'an interval replaces the cron');
    assert.equal(changed.body.next_run_times.length, 5);
    assert.equal((await http.delete(`/schedules/${cron.body.id}/`)).status, 204);
    assert.equal(await temporalScheduleExists(engine.api, cron.body.id), false);
    assert.equal((await http.delete(`/wf/${wf}/`)).status, 204);
  });

  it('a latest-version schedule whose inputs no longer fit the changed workflow records a failed run saying why, and keeps firing', async () => {
    const { http } = engine;
    const wf = await newWorkflow(http, 'changing');
    const sc = (
      await http.post(`/wf/${wf}/schedules/`, { interval_seconds: MIN_INTERVAL, initial_inputs: { in: { x: 'a' } } })
    ).body;
    const changed = {
      ...echo,
      nodes: [
        n('start', 'InputNode', { output_schema: { x: 'string' } }),
        n('out', 'OutputNode', { output_map: { x: 'start.x' } }),
      ],
      links: [l('start', 'out')],
    };
    const put = await http.put(`/wf/${wf}/`, { name: `changing-${Date.now()}`, definition: changed });
    assert.equal(put.status, 200, put.text);
    const failed = await eventually(
      'two failed scheduled runs',
      async () => {
        const runs = (await runsOf(http, wf)).filter((r) => r.status === 'FAILED');
        return runs.length >= 2 ? runs : undefined;
      },
      TWO_FIRES_MS,
    );
    for (const run of failed) assert.match(run.message ?? '', /schedule's inputs no longer fit the workflow/);
    assert.ok((await http.get(`/schedules/${sc.id}/`)).body.next_run_times.length > 0, 'it keeps its times');
    assert.equal((await http.delete(`/wf/${wf}/`)).status, 204);
  });
});

describe('e2e: a schedule through a worker kill and a Temporal restart', function () {
  this.timeout(180_000);
  let own: TemporalServer | undefined;
  let api: TestApi | undefined;
  let worker: TestWorker | undefined;
  after(async () => {
    await worker?.stop();
    await api?.close();
    await own?.handle.stop();
  });

  it('keeps firing, catches up the fires missed while Temporal was down, one run per fire time, every run completed', async () => {
    own = await onFreePort((port) =>
      startTemporal({
        ...TEMPORAL_DEV_OPTIONS,
        port,
        uiPort: null,
        dbFile: path.join(stack.tmpDir, `schedules-restart-${Date.now()}.db`),
        logFile: path.join(stack.tmpDir, 'temporal-schedules-restart.log'),
      }),
    );
    api = await startApi({ SPUR_TEMPORAL_ADDRESS: own.address });
    const http = client(api.baseUrl);
    worker = await startWorker(api.env);
    const wf = await newWorkflow(http, 'through outages');
    // allow_all: every fire gets its run, also the ones queued while the worker is gone.
    const sc = (
      await http.post(`/wf/${wf}/schedules/`, {
        interval_seconds: MIN_INTERVAL,
        overlap: 'allow_all',
        initial_inputs: { in: { x: 'o' } },
      })
    ).body;
    await until('a first run', async () => (await runsOf(http, wf)).length >= 1);

    worker.process.kill('SIGKILL');
    await worker.process.exited;
    await worker.stop();
    await sleep(3000);
    worker = await startWorker(api.env);
    const afterWorker = Date.now();
    await until('runs fired after the worker came back', async () =>
      (await runsOf(http, wf)).some((r) => Date.parse(r.start_time) > afterWorker),
    );

    // Temporal down for 13 s: the fires due meanwhile are caught up once it is back (within the window).
    await own.handle.stop();
    const down = Date.now();
    // Longer than an interval and the margins below: at least one fire falls due inside it.
    await sleep(MIN_INTERVAL * 1000 + 3000);
    own.handle = (await startTemporal(own.options)).handle;
    const afterTemporal = Date.now();
    // A fire whose time fell inside the outage, recorded once Temporal's scheduler woke up again.
    // Waited for before pausing: a paused schedule drops the fires it has buffered but not started.
    const dueWhileDown = (r: Run) => {
      const at = Date.parse(r.trigger?.scheduled_time ?? '');
      return at > down + 500 && at < afterTemporal - 2000;
    };
    await until(
      'a fire due while Temporal was down caught up',
      async () => (await runsOf(http, wf)).some(dueWhileDown),
      60_000,
    ).catch(async (err: Error) => {
      const described = await api?.temporal.schedule
        .getHandle(scheduleTemporalId(sc.id, api.env.SPUR_WORKFLOW_ID_PREFIX))
        .describe();
      const times = (await runsOf(http, wf)).map((r) => r.trigger?.scheduled_time).sort();
      throw new Error(
        `${err.message}; down ${new Date(down).toISOString()}, back ${new Date(afterTemporal).toISOString()}, ` +
          `missed catch-up window ${described?.info.numActionsMissedCatchupWindow}, fire times ${times.join(' ')}`,
      );
    });
    await until(
      'runs fired after Temporal came back',
      async () => (await runsOf(http, wf)).filter((r) => Date.parse(r.start_time) > afterTemporal).length >= 2,
      60_000,
    );
    assert.equal((await http.post(`/schedules/${sc.id}/pause/`, {})).status, 200);
    // Fires Temporal started before the pause may not have recorded their runs yet: wait for every
    // fire's workflow to close first.
    const fires = `WorkflowType = '${WorkflowType.spurScheduledRun}' AND TaskQueue = '${api.env.SPUR_TASK_QUEUE}' AND ExecutionStatus = 'Running'`;
    const temporalClient = api.temporal;
    await until('every fire closed', async () => (await temporalClient.workflow.count(fires)).count === 0, 60_000);
    const runs = await eventually(
      'every run ended',
      async () => {
        const all = await runsOf(http, wf);
        return all.every((r) => !['PENDING', 'RUNNING'].includes(r.status)) ? all : undefined;
      },
      60_000,
    );
    assert.ok(
      runs.every((r) => r.status === 'COMPLETED'),
      JSON.stringify(runs.map((r) => [r.id, r.status])),
    );
    const times = runs.map((r) => r.trigger?.scheduled_time);
    assert.equal(new Set(times).size, times.length, 'one run per fire time, however often a recording was retried');
    assert.ok(runs.some(dueWhileDown), 'the caught-up fire is among the runs');
    assert.equal((await http.delete(`/wf/${wf}/`)).status, 204);
  });
});

/** The wire message of an insert into the runs collection (its command's first element, BSON). */
const RUN_INSERT = Buffer.concat([
  Buffer.from([0x02]),
  Buffer.from('insert\0'),
  Buffer.from([5, 0, 0, 0]),
  Buffer.from('runs\0'),
]);

/** What docs/triggers.md promises: a recording whose worker died holds a delete up for at most this. */
const DEAD_RECORDING_HOLD_MS = 20_000;
/** Closing, deleting the Temporal Schedule and the document: a bound for a loaded machine, not a speed. */
const DELETE_OWN_WORK_MS = 6_000;

describe('e2e: a schedule deleted while a fire records its run', function () {
  this.timeout(120_000);
  let api: TestApi | undefined;
  let relay: TcpRelay | undefined;
  let worker: TestWorker | undefined;
  before(async () => {
    api = await startApi();
    // The worker's database traffic passes a relay, which holds the fire's run insert on the wire:
    // the fire has read its schedule and is about to record the run when the delete comes.
    const mongoUrl = new URL(api.env.SPUR_MONGODB_URI as string);
    relay = await startTcpRelay({ host: mongoUrl.hostname, port: Number(mongoUrl.port) }, 'mongodb');
    mongoUrl.host = relay.address;
    worker = await startWorker(api.env, { SPUR_MONGODB_URI: mongoUrl.toString() });
  });
  after(async () => {
    relay?.release();
    await worker?.stop();
    await relay?.close();
    await api?.close();
  });

  for (const deleted of ['workflow', 'schedule'] as const)
    it(`deleting the ${deleted} while a fire's run insert is on its way: no run of the schedule appears after the answer`, async () => {
      const http = client((api as TestApi).baseUrl);
      const wf = await newWorkflow(http, `deleted ${deleted}`);
      (relay as TcpRelay).hold((message) => message.includes(RUN_INSERT));
      const sc = (
        await http.post(`/wf/${wf}/schedules/`, {
          interval_seconds: MIN_INTERVAL,
          initial_inputs: { in: { x: 'late' } },
        })
      ).body as { id: string };
      await until('a fire sent its run insert', async () => (relay as TcpRelay).heldCount() > 0);
      const path = deleted === 'workflow' ? `/wf/${wf}/` : `/schedules/${sc.id}/`;
      // The runs listed the moment the delete answers, whenever that is.
      const answered = http.delete(path).then(async (res) => ({ res, runs: await scheduledRunsOf(http, sc.id) }));
      await sleep(1500);
      (relay as TcpRelay).release();
      const { res, runs: atAnswer } = await answered;
      assert.equal(res.status, 204, res.text);
      await sleep(3500); // far longer than a released insert takes to land
      const later = await scheduledRunsOf(http, sc.id);
      assert.deepEqual(
        later.map((r) => r.id),
        atAnswer.map((r) => r.id),
        'no run of the schedule appeared after the answer',
      );
      if (deleted === 'workflow') assert.deepEqual(later, [], 'the workflow took its runs along');
      assert.equal((await http.get(`/schedules/${sc.id}/`)).status, 404);
      if (deleted === 'schedule') assert.equal((await http.delete(`/wf/${wf}/`)).status, 204);
    });

  it("a recording whose worker died holds a schedule's delete up for at most 20 s, and no run appears", async () => {
    const http = client((api as TestApi).baseUrl);
    const wf = await newWorkflow(http, 'dead recorder');
    (relay as TcpRelay).hold((message) => message.includes(RUN_INSERT));
    const sc = (
      await http.post(`/wf/${wf}/schedules/`, { interval_seconds: MIN_INTERVAL, initial_inputs: { in: { x: 'dead' } } })
    ).body as { id: string };
    await until('a fire sent its run insert', async () => (relay as TcpRelay).heldCount() > 0);
    // The fire opened its recording, then its worker died with the insert on the wire.
    const { ScheduleFire } = (api as TestApi).models;
    // The worker wrote its recording before it sent the insert, yet one loaded CI run counted none
    // at this point (cause not found: no other writer of either collection is in reach). The count
    // is waited for before the delete.
    await until(
      "the fire's recording is open",
      async () => (await ScheduleFire.countDocuments({ schedule_id: sc.id, closing: false })) === 1,
      10_000,
    );
    (worker as TestWorker).process.kill('SIGKILL');
    await (worker as TestWorker).process.exited;
    const asked = Date.now();
    const res = await http.delete(`/schedules/${sc.id}/`);
    const heldMs = Date.now() - asked;
    assert.equal(res.status, 204, res.text);
    // 20 s of waiting for the dead recording, and the delete's own few writes beside it.
    assert.ok(heldMs <= DEAD_RECORDING_HOLD_MS + DELETE_OWN_WORK_MS, `the delete answered after ${heldMs} ms`);
    assert.deepEqual(await scheduledRunsOf(http, sc.id), [], 'the dead fire recorded no run');
    assert.equal((await http.get(`/schedules/${sc.id}/`)).status, 404);
    assert.equal(await ScheduleFire.countDocuments({ schedule_id: sc.id }), 0, 'nothing of the schedule is left');
  });
});
