import assert from 'node:assert/strict';
import { scheduleTemporalId } from '../../src/contracts/schedule-contract';
import { type Engine, isFinal, startEngine, waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { l, n } from '../support/graphs';
import { client } from '../support/http';
import { eventually } from '../support/python-runs';

type Http = ReturnType<typeof client>;
interface Run {
  id: string;
  status: string;
  start_time: string;
  end_time: string | null;
  trigger: { scheduled_time: string | null } | null;
}

/** in(x) → a human gate → out: a run that goes on until the test approves it. */
const gated = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('gate', 'HumanInterventionNode', { message: 'hold' }),
    n('out', 'OutputNode'),
  ],
  links: [l('in', 'gate'), l('gate', 'out')],
};

/** in(x) → out(x): a run that ends in milliseconds. */
const echo = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('out', 'OutputNode', { output_map: { x: 'in.x' } }),
  ],
  links: [l('in', 'out')],
};

/** Once a year (1 January, 00:00 UTC): nothing fires by itself while a test runs; backfills pick the years. */
const YEARLY = '0 0 1 1 *';
const newYear = (year: number) => `${year}-01-01T00:00:00.000Z`;

/**
 * What each overlap policy does with fires that come while a run goes on, seen in the runs it
 * leaves. The fires are backfilled years of a yearly schedule: each backfill's times are due at
 * once, and a run held at a human gate is "still running" for exactly as long as the test wants.
 */
describe('e2e: schedule overlap policies, cron time zones and backfill caps', function () {
  this.timeout(120_000);
  let engine: Engine;
  let http: Http;
  before(async () => {
    engine = await startEngine();
    http = engine.http;
  });
  after(() => engine?.close());

  async function newSchedule(body: Record<string, unknown>, definition: unknown = gated) {
    const wf = await http.post('/wf/', { name: `overlap-${Date.now()}-${Math.random()}`, definition });
    assert.equal(wf.status, 200, wf.text);
    const sc = await http.post(`/wf/${wf.body.id}/schedules/`, { initial_inputs: { in: { x: 'o' } }, ...body });
    assert.equal(sc.status, 200, sc.text);
    return { wf: wf.body.id as string, id: sc.body.id as string };
  }

  /** Backfills the new years of `years` (a range from just before the first to just after the last). */
  async function backfill(scheduleId: string, years: number[]) {
    const res = await http.post(`/schedules/${scheduleId}/backfill/`, {
      start_time: `${Math.min(...years) - 1}-12-31T12:00:00Z`,
      end_time: `${Math.max(...years)}-01-01T12:00:00Z`,
    });
    assert.equal(res.status, 202, res.text);
  }

  /** The workflow's runs, oldest fire first. */
  async function runs(wf: string): Promise<Run[]> {
    const res = await http.get(`/wf/${wf}/runs/?page_size=100`);
    assert.equal(res.status, 200, res.text);
    return (res.body as Run[]).sort((a, b) =>
      (a.trigger?.scheduled_time ?? '').localeCompare(b.trigger?.scheduled_time ?? ''),
    );
  }

  const firedFor = (wf: string, year: number) =>
    eventually(`the run of ${year}`, async () =>
      (await runs(wf)).find((r) => r.trigger?.scheduled_time === newYear(year)),
    );

  async function pausedRunOf(wf: string, year: number): Promise<Run> {
    const run = await firedFor(wf, year);
    return (await waitForRun(http, run.id, (r) => r.status === 'PAUSED')) as Run;
  }

  async function approve(runId: string) {
    const res = await http.post(`/wf/process_pause_action/${runId}/`, {
      action: 'APPROVE',
      user_id: 'test',
      inputs: {},
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }

  const describeSchedule = (scheduleId: string) =>
    engine.api.temporal.schedule
      .getHandle(scheduleTemporalId(scheduleId, engine.api.env.SPUR_WORKFLOW_ID_PREFIX as string))
      .describe();

  /** Temporal has nothing of the schedule running or buffered: no run is still to come. */
  const settled = (scheduleId: string) =>
    until('no fire running or buffered', async () => {
      const d = await describeSchedule(scheduleId);
      return d.info.runningActions.length === 0 && Number(String(d.raw.info?.bufferSize ?? 0)) === 0;
    });

  const summary = (all: Run[]) => all.map((r) => [r.trigger?.scheduled_time, r.status]);

  it('skip: fires during a run start nothing, then or later', async () => {
    const sc = await newSchedule({ cron: YEARLY, overlap: 'skip' });
    await backfill(sc.id, [2020]);
    const first = await pausedRunOf(sc.wf, 2020);
    await backfill(sc.id, [2021, 2022]);
    await until('two fires skipped', async () => (await describeSchedule(sc.id)).info.numActionsSkippedOverlap === 2);
    await approve(first.id);
    await waitForRun(http, first.id, isFinal);
    await settled(sc.id);
    assert.deepEqual(summary(await runs(sc.wf)), [[newYear(2020), 'COMPLETED']]);
  });

  it('buffer_one: fires during a run keep one (the first) for after it; the others start nothing', async () => {
    const sc = await newSchedule({ cron: YEARLY, overlap: 'buffer_one' });
    await backfill(sc.id, [2020]);
    const first = await pausedRunOf(sc.wf, 2020);
    await backfill(sc.id, [2021, 2022, 2023]);
    await until('two fires dropped', async () => (await describeSchedule(sc.id)).info.numActionsSkippedOverlap === 2);
    assert.equal((await runs(sc.wf)).length, 1, 'nothing started beside the running run');
    await approve(first.id);
    const second = await pausedRunOf(sc.wf, 2021);
    assert.ok(
      Date.parse(second.start_time) >= Date.parse((await waitForRun(http, first.id, isFinal)).end_time as string),
    );
    await approve(second.id);
    await waitForRun(http, second.id, isFinal);
    await settled(sc.id);
    assert.deepEqual(summary(await runs(sc.wf)), [
      [newYear(2020), 'COMPLETED'],
      [newYear(2021), 'COMPLETED'],
    ]);
  });

  it('buffer_all: fires during a run each start after it, one at a time, in order', async () => {
    const sc = await newSchedule({ cron: YEARLY, overlap: 'buffer_all' });
    await backfill(sc.id, [2020]);
    const first = await pausedRunOf(sc.wf, 2020);
    await backfill(sc.id, [2021, 2022]);
    await until(
      'two fires buffered',
      async () => Number(String((await describeSchedule(sc.id)).raw.info?.bufferSize ?? 0)) === 2,
    );
    assert.equal((await runs(sc.wf)).length, 1, 'nothing started beside the running run');
    await approve(first.id);
    await approve((await pausedRunOf(sc.wf, 2021)).id);
    await approve((await pausedRunOf(sc.wf, 2022)).id);
    await settled(sc.id);
    const all = await runs(sc.wf);
    assert.deepEqual(summary(all), [
      [newYear(2020), 'COMPLETED'],
      [newYear(2021), 'COMPLETED'],
      [newYear(2022), 'COMPLETED'],
    ]);
    for (let i = 1; i < all.length; i++)
      assert.ok(
        Date.parse((all[i] as Run).start_time) >= Date.parse((all[i - 1] as Run).end_time as string),
        `the run of ${all[i]?.trigger?.scheduled_time} started before the one before it ended`,
      );
    assert.equal((await describeSchedule(sc.id)).info.numActionsSkippedOverlap, 0);
  });

  it('cancel_other: a fire during a run cancels it and runs instead; of fires due together only the latest runs', async () => {
    const sc = await newSchedule({ cron: YEARLY, overlap: 'cancel_other' });
    await backfill(sc.id, [2020]);
    const first = await pausedRunOf(sc.wf, 2020);
    await backfill(sc.id, [2021, 2022]);
    assert.equal((await waitForRun(http, first.id, isFinal)).status, 'CANCELED');
    const latest = await pausedRunOf(sc.wf, 2022);
    await approve(latest.id);
    await waitForRun(http, latest.id, isFinal);
    await settled(sc.id);
    assert.deepEqual(summary(await runs(sc.wf)), [
      [newYear(2020), 'CANCELED'],
      [newYear(2022), 'COMPLETED'],
    ]);
  });

  it('reads a cron in its time zone across a daylight-saving change: 09:00 New York is 14:00 UTC, then 13:00', async () => {
    const sc = await newSchedule({ cron: '0 9 * * *', timezone: 'America/New_York', overlap: 'allow_all' }, echo);
    // Clocks in New York went forward on Sunday 10 March 2024, 02:00 EST → 03:00 EDT.
    const res = await http.post(`/schedules/${sc.id}/backfill/`, {
      start_time: '2024-03-08T12:00:00Z',
      end_time: '2024-03-11T15:00:00Z',
    });
    assert.equal(res.status, 202, res.text);
    const done = await eventually('four runs completed', async () => {
      const all = (await runs(sc.wf)).filter((r) => r.status === 'COMPLETED');
      return all.length >= 4 ? all : undefined;
    });
    await settled(sc.id);
    assert.deepEqual(
      done.map((r) => r.trigger?.scheduled_time),
      ['2024-03-08T14:00:00.000Z', '2024-03-09T14:00:00.000Z', '2024-03-10T13:00:00.000Z', '2024-03-11T13:00:00.000Z'],
    );
    assert.equal((await runs(sc.wf)).length, 4);
  });

  it('caps a backfill at 1 000 runs, counted from the fire times: a daily cron over 1 000 days is taken, 1 001 is 422', async () => {
    // Daily at midnight UTC; under skip a backfill's fires due together start one run.
    const sc = await newSchedule({ cron: '0 0 * * *', overlap: 'skip' }, echo);
    const start = Date.parse('2020-01-01T12:00:00Z');
    const day = 24 * 3600 * 1000;
    const over = await http.post(`/schedules/${sc.id}/backfill/`, {
      start_time: new Date(start).toISOString(),
      end_time: new Date(start + 1001 * day).toISOString(),
    });
    assert.equal(over.status, 422, over.text);
    assert.deepEqual(over.body.detail[0].loc, ['body', 'end_time']);
    assert.match(over.body.detail[0].msg, /at most 1000 runs/);
    const atCap = await http.post(`/schedules/${sc.id}/backfill/`, {
      start_time: new Date(start).toISOString(),
      end_time: new Date(start + 1000 * day).toISOString(),
    });
    assert.equal(atCap.status, 202, atCap.text);
    const [run] = await eventually('the backfill ran', async () => {
      const all = await runs(sc.wf);
      return all.length > 0 ? all : undefined;
    });
    await settled(sc.id);
    // Only the taken backfill's fires: its first, 2 January 2020, started; the refused one none.
    assert.equal(run?.trigger?.scheduled_time, '2020-01-02T00:00:00.000Z');
    assert.equal((await runs(sc.wf)).length, 1);
    // Every minute for 1 001 minutes (well inside the old cap of 7 days for a cron) is refused too.
    const minutely = await newSchedule({ cron: '* * * * *', paused: true }, echo);
    const now = Date.now();
    const tooMany = await http.post(`/schedules/${minutely.id}/backfill/`, {
      start_time: new Date(now - 1001 * 60_000).toISOString(),
      end_time: new Date(now).toISOString(),
    });
    assert.equal(tooMany.status, 422, tooMany.text);
    assert.deepEqual(await runs(minutely.wf), []);
  });
});
