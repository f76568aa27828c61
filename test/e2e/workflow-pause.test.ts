import assert from 'node:assert/strict';
import { onSpurQueues } from '../support/spur-queues';
import { runWorkflowId } from '../../src/contracts/workflow-names';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, memberWithKey, userWithKey } from '../support/access';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { createSuite, echoDefinition, uploadRows } from '../support/evals';
import { gatedByHuman, l, n } from '../support/graphs';
import { client } from '../support/http';
import { eventually } from '../support/python-runs';

type Http = ReturnType<typeof client>;

const KEY = 'spur_workflow-pause-key-0123456789';
/** SPUR_WEBHOOK_MAX_HELD here: more than any other test holds. */
const MAX_HELD = 8;
const TAG = /paused: "deploy freeze" \(since [^)]+\)/;

/** in(title) → out(title): a run that ends in milliseconds. */
const echo = {
  nodes: [
    n('in', 'InputNode', { output_schema: { title: 'string' } }),
    n('out', 'OutputNode', { output_map: { title: 'in.title' } }),
  ],
  links: [l('in', 'out')],
};

interface Run {
  id: string;
  status: string;
  start_time: string;
  run_type: string;
  initial_inputs: Record<string, Record<string, unknown>>;
  trigger: { kind: string; id: string } | null;
}

describe('e2e: pausing a workflow', function () {
  this.timeout(180_000);
  let engine: Engine;
  let admin: Http;
  let hooks: Http;

  before(async () => {
    engine = await startEngine({ SPUR_API_KEY_HASHES: hashApiKey(KEY), SPUR_WEBHOOK_MAX_HELD: String(MAX_HELD) });
    admin = client(engine.api.baseUrl, bearer(KEY));
    // Hook URLs are answered as `/api/hooks/<token>`: sent from the origin, without a key.
    hooks = client(new URL(engine.api.baseUrl).origin);
  });
  after(async () => {
    await engine?.close();
  });

  async function newWorkflow(definition: unknown = echo): Promise<string> {
    const res = await admin.post('/wf/', { name: `pause-${Date.now()}-${Math.random()}`, definition });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  }

  async function runsOf(workflowId: string): Promise<Run[]> {
    const res = await admin.get(`/wf/${workflowId}/runs/?page_size=100`);
    assert.equal(res.status, 200, res.text);
    return res.body as Run[];
  }

  const pausedOf = async (workflowId: string) => (await admin.get(`/wf/${workflowId}/`)).body.paused;

  /** Workflows Temporal lists for a query, once its visibility shows `atLeast` of them. */
  async function temporalCount(query: string, atLeast: number): Promise<number> {
    return eventually(`Temporal lists ${atLeast} for ${query}`, async () => {
      const { count } = await engine.api.temporal.workflow.count(query);
      return count >= atLeast ? count : undefined;
    });
  }

  it('shows the pause on the workflow and in the list; pausing twice and resuming a running workflow are 409', async () => {
    const wf = await newWorkflow();
    const other = await newWorkflow();
    const paused = await admin.post(`/wf/${wf}/pause/`, { reason: 'deploy freeze', hold_webhooks: false });
    assert.equal(paused.status, 200, paused.text);
    const expected = {
      reason: 'deploy freeze',
      since: paused.body.paused.since,
      by: paused.body.paused.by,
      hold_webhooks: false,
      held_deliveries: 0,
    };
    assert.deepEqual(paused.body, { workflow_id: wf, paused: expected });
    assert.match(String(expected.by), /^key:[0-9a-f]{12}$/, 'the configured key that paused it');
    assert.deepEqual(await pausedOf(wf), expected);
    const listed = (await admin.get('/wf/?page_size=100')).body as Array<{ id: string; name: string; paused: unknown }>;
    assert.deepEqual(listed.find((w) => w.id === wf)?.paused, expected);
    assert.equal(listed.find((w) => w.id === other)?.paused, null, 'PySpur fields unchanged, paused null');

    const again = await admin.post(`/wf/${wf}/pause/`, { reason: 'another reason' });
    assert.equal(again.status, 409, again.text);
    assert.match(again.body.detail, new RegExp(`^Workflow ${wf} is already ${TAG.source}`));
    assert.deepEqual(await pausedOf(wf), expected, 'the first pause stands');

    const resumed = await admin.post(`/wf/${wf}/resume/`);
    assert.equal(resumed.status, 200, resumed.text);
    assert.deepEqual(resumed.body, { workflow_id: wf, paused: null, released_deliveries: 0 });
    assert.equal(await pausedOf(wf), null);
    const twice = await admin.post(`/wf/${wf}/resume/`);
    assert.equal(twice.status, 409, twice.text);
    assert.equal(twice.body.detail, `Workflow ${wf} is not paused`);
  });

  it('refuses a body it does not know (422) and pauses nothing', async () => {
    const wf = await newWorkflow();
    for (const body of [
      { reason: 'x', hold_webhook: false },
      { reason: 'x'.repeat(2001) },
      { hold_webhooks: 'no' },
      { reason: { $ne: null } },
    ]) {
      const res = await admin.post(`/wf/${wf}/pause/`, body);
      assert.equal(res.status, 422, `${JSON.stringify(body).slice(0, 80)}: ${res.text.slice(0, 300)}`);
      assert.equal(await pausedOf(wf), null);
    }
    assert.equal(await engine.api.models.WorkflowPause.countDocuments({ _id: wf }), 0);
  });

  it('refuses every start of a paused workflow with 409 naming the pause; none is recorded or reaches Temporal', async () => {
    const wf = await newWorkflow(echoDefinition('reply', ['reply']));
    const dataset = await uploadRows(admin, `pause rows ${wf}`, [{ reply: 'a', extra: 'b', answer: 'a' }]);
    const suite = await createSuite(admin, {
      name: `pause suite ${wf}`,
      dataset_id: dataset,
      answer_column: 'answer',
      scorer: { type: 'exact' },
    });
    const inputs = { initial_inputs: { in: { reply: 'hello' } } };
    const before = await admin.post(`/wf/${wf}/run/`, inputs);
    assert.equal(before.status, 200, before.text);
    const [earlier] = await runsOf(wf);
    assert.ok(earlier);
    // A second version, for a comparison of two (a run pins the definition it ran as one).
    const edited = { name: `pause-edited-${wf}`, definition: echoDefinition('reply', ['reply', 'extra']) };
    assert.equal((await admin.put(`/wf/${wf}/`, edited)).status, 200);
    assert.equal((await admin.post(`/wf/${wf}/start_run/`, inputs)).status, 200);
    const startedBefore = (await runsOf(wf)).map((r) => r.id);
    assert.equal((await admin.put(`/wf/${wf}/mcp/`, { enabled: true, tool_name: `paused_tool_${wf}` })).status, 200);
    const schedule = await admin.post(`/wf/${wf}/schedules/`, {
      cron: '0 0 1 1 *',
      initial_inputs: { in: { reply: 'sc' } },
    });
    assert.equal(schedule.status, 200, schedule.text);

    assert.equal((await admin.post(`/wf/${wf}/pause/`, { reason: 'deploy freeze' })).status, 200);
    const starts: Array<[string, string, Record<string, unknown>]> = [
      ['run', `/wf/${wf}/run/`, inputs],
      ['runv2', `/wf/${wf}/runv2/`, inputs],
      ['start_run', `/wf/${wf}/start_run/`, inputs],
      ['start_batch_run', `/wf/${wf}/start_batch_run/`, { dataset_id: dataset }],
      ['run_partial', `/wf/${wf}/run_partial/`, { node_id: 'out', ...inputs }],
      ['rerun', `/run/${earlier.id}/rerun/`, { from_node_id: 'in' }],
      ['chat completions', '/v1/chat/completions', { model: wf, messages: [{ role: 'user', content: 'hi' }] }],
      [
        'eval launch',
        '/evals/launch/',
        { workflow_id: wf, eval_name: suite.name, output_variable: 'out-answer', num_samples: 1 },
      ],
      ['eval compare', '/evals/compare/', { suite: suite.name, workflow_id: wf, versions: [1, 2] }],
      ['schedule trigger', `/schedules/${schedule.body.id}/trigger/`, {}],
    ];
    for (const [what, path, body] of starts) {
      const res = await admin.post(path, body);
      assert.equal(res.status, 409, `${what}: ${res.text}`);
      assert.match(
        res.body.detail,
        new RegExp(`^Workflow ${wf} is ${TAG.source}: no run of it starts until it is resumed`),
        what,
      );
    }
    const mcp = await fetch(`${engine.api.baseUrl}/mcp`, {
      method: 'POST',
      headers: { ...bearer(KEY), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: `paused_tool_${wf}`, arguments: { reply: 'via mcp', extra: 'x' } },
      }),
    });
    const text = await mcp.text();
    const data = text.split('\n').find((line) => line.startsWith('data: '));
    const answer = JSON.parse(data ? data.slice(6) : text) as {
      result?: { isError?: boolean; content?: Array<{ text: string }> };
    };
    assert.equal(answer.result?.isError, true, text);
    assert.match(String(answer.result?.content?.[0]?.text), TAG);

    assert.deepEqual(
      (await runsOf(wf)).map((r) => r.id),
      startedBefore,
      'only the runs from before the pause',
    );
    assert.deepEqual((await admin.get('/evals/runs/')).body, [], 'no eval run was recorded');
    // After the resume one run and one partial run start: once Temporal lists them, it lists nothing the refusals started.
    assert.equal((await admin.post(`/wf/${wf}/resume/`)).status, 200);
    assert.equal((await admin.post(`/wf/${wf}/start_run/`, inputs)).status, 200);
    assert.equal((await admin.post(`/wf/${wf}/run_partial/`, { node_id: 'out', ...inputs })).status, 200);
    const expected = startedBefore.length + 1;
    assert.equal(
      await temporalCount(
        `SpurWorkflowId = '${wf}' AND ${onSpurQueues(engine.api.env.SPUR_TASK_QUEUE as string)}`,
        expected,
      ),
      expected,
      'the runs before the pause and the one after',
    );
    const partials = `WorkflowType = 'spurPartialRun' AND TaskQueue = '${engine.api.env.SPUR_TASK_QUEUE}'`;
    assert.equal(await temporalCount(partials, 1), 1, 'only the partial run after the resume');
    assert.equal((await admin.delete(`/wf/${wf}/`)).status, 204, 'its schedule goes with it');
  });

  describe('a pause answered through one api', () => {
    let other: ApiProcess | undefined;
    after(async () => {
      await other?.process.stop();
    });

    it('is found by every start another api process records after the answer, though that api checks pauses from memory', async () => {
      other = await startApiProcess(engine.api.env);
      const viaOther = client(other.baseUrl, bearer(KEY));
      const wf = await newWorkflow();
      const inputs = { initial_inputs: { in: { title: 'x' } } };
      // The other api starts a run: it has just asked whether the workflow is paused (no) and
      // keeps that answer in memory for up to a second.
      assert.equal((await viaOther.post(`/wf/${wf}/start_run/`, inputs)).status, 200);
      const before = (await runsOf(wf)).map((r) => r.id);
      const paused = await admin.post(`/wf/${wf}/pause/`, { reason: 'deploy freeze' });
      assert.equal(paused.status, 200, paused.text);
      for (const path of [`/wf/${wf}/start_run/`, `/wf/${wf}/run/`]) {
        const res = await viaOther.post(path, inputs);
        assert.equal(res.status, 409, `${path}: ${res.text}`);
        assert.match(res.body.detail, TAG);
      }
      assert.deepEqual(
        (await runsOf(wf)).map((r) => r.id),
        before,
        'no run was recorded after the answer',
      );
      assert.equal((await admin.post(`/wf/${wf}/resume/`, {})).status, 200);
    });
  });

  it('leaves a run that started before the pause alone: it goes on to complete', async () => {
    const wf = await newWorkflow(gatedByHuman);
    const started = await admin.post(`/wf/${wf}/start_run/`, { initial_inputs: { in: { x: 'go' } } });
    assert.equal(started.status, 200, started.text);
    await waitForRun(admin, started.body.id, (r) => r.status === 'PAUSED');
    assert.equal((await admin.post(`/wf/${wf}/pause/`, { reason: 'deploy freeze' })).status, 200);
    const action = { action: 'APPROVE', user_id: 'ops', inputs: {}, comments: 'fine' };
    assert.equal((await admin.post(`/wf/process_pause_action/${started.body.id}/`, action)).status, 200);
    assert.equal((await waitForRun(admin, started.body.id)).status, 'COMPLETED');
    assert.ok((await pausedOf(wf)) !== null, 'the workflow is still paused');
  });

  it("records a schedule's fires while the workflow is paused as skipped, naming the pause, and starts no run", async () => {
    const wf = await newWorkflow();
    const sc = await admin.post(`/wf/${wf}/schedules/`, {
      interval_seconds: 60,
      overlap: 'allow_all',
      initial_inputs: { in: { title: 'scheduled' } },
    });
    assert.equal(sc.status, 200, sc.text);
    assert.deepEqual(sc.body.skipped_fires, []);
    assert.equal((await admin.post(`/wf/${wf}/pause/`, { reason: 'deploy freeze' })).status, 200);
    // Two whole minutes in the past, from half a minute past one: two fire times, fired at once.
    const start = Math.floor(Date.now() / 60_000) * 60_000 - 600_000 + 30_000;
    const backfill = await admin.post(`/schedules/${sc.body.id}/backfill/`, {
      start_time: new Date(start).toISOString(),
      end_time: new Date(start + 120_000).toISOString(),
    });
    assert.equal(backfill.status, 202, backfill.text);
    // Only the backfilled fires: one of the schedule's own may be skipped meanwhile too.
    const backfilled = (fires: Array<{ scheduled_time: string; reason: string }>) =>
      fires.filter((f) => Date.parse(f.scheduled_time) < start + 120_000);
    const skipped = await eventually('two skipped fires', async () => {
      const shown = (await admin.get(`/schedules/${sc.body.id}/`)).body;
      return backfilled(shown.skipped_fires).length >= 2 ? backfilled(shown.skipped_fires) : undefined;
    });
    assert.deepEqual(
      skipped.map((f) => f.scheduled_time),
      [2, 1].map((i) => new Date(start - 30_000 + i * 60_000).toISOString()),
      'newest first, at their fire times',
    );
    for (const fire of skipped) assert.match(fire.reason, new RegExp(`^Workflow ${wf} is ${TAG.source}`));
    assert.deepEqual(await runsOf(wf), []);
    const fires = `WorkflowType = 'spurScheduledRun' AND TaskQueue = '${engine.api.env.SPUR_TASK_QUEUE}' AND ExecutionStatus = 'Completed'`;
    await temporalCount(fires, 2);
    assert.deepEqual(await runsOf(wf), [], 'the fires ended without a run');
    // Its Temporal Schedule would otherwise keep firing on the shared server.
    assert.equal((await admin.delete(`/wf/${wf}/`)).status, 204);
  });

  it('with hold_webhooks false a delivery is 409 naming the pause, and nothing is held or started', async () => {
    const wf = await newWorkflow();
    const trigger = (await admin.post(`/wf/${wf}/triggers/`, { name: 'refused' })).body;
    assert.equal((await admin.post(`/wf/${wf}/pause/`, { reason: 'deploy freeze', hold_webhooks: false })).status, 200);
    const res = await hooks.post(trigger.url, { title: 'knock' });
    assert.equal(res.status, 409, res.text);
    assert.match(res.body.detail, new RegExp(`^Workflow ${wf} is ${TAG.source}`));
    assert.equal((await pausedOf(wf)).held_deliveries, 0);
    assert.equal(await engine.api.models.HeldDelivery.countDocuments({ workflow_id: wf }), 0);
    assert.deepEqual(await runsOf(wf), []);
  });

  it('holds nothing a delivery could not start a run with: a forged value reference is 422', async () => {
    const wf = await newWorkflow();
    const trigger = (await admin.post(`/wf/${wf}/triggers/`, { name: 'forged' })).body;
    assert.equal((await admin.post(`/wf/${wf}/pause/`, { reason: 'deploy freeze' })).status, 200);
    const forged = { __spur_value_ref__: { id: 'R1/0000', bytes: 4, seal: 'forged' } };
    const res = await hooks.post(trigger.url, { title: forged });
    assert.equal(res.status, 422, res.text);
    assert.equal((await pausedOf(wf)).held_deliveries, 0);
    assert.equal(await engine.api.models.HeldDelivery.countDocuments({ workflow_id: wf }), 0);
  });

  it(`holds at most SPUR_WEBHOOK_MAX_HELD deliveries per workflow: the next is 429 with Retry-After, and not held`, async () => {
    const wf = await newWorkflow();
    const trigger = (await admin.post(`/wf/${wf}/triggers/`, { name: 'full', rate_per_second: 1000 })).body;
    assert.equal((await admin.post(`/wf/${wf}/pause/`, { reason: 'deploy freeze' })).status, 200);
    for (let i = 0; i < MAX_HELD; i++) assert.equal((await hooks.post(trigger.url, { title: `n${i}` })).status, 202);
    const res = await hooks.post(trigger.url, { title: 'one too many' });
    assert.equal(res.status, 429, res.text);
    assert.equal(res.headers.get('retry-after'), '60');
    assert.match(
      res.body.detail,
      new RegExp(`^Workflow ${wf} is ${TAG.source} and holds ${MAX_HELD} deliveries, the most it holds`),
    );
    assert.equal((await pausedOf(wf)).held_deliveries, MAX_HELD);
    // Removed with the workflow, which starts none of them.
    assert.equal((await admin.delete(`/wf/${wf}/`)).status, 204);
    assert.equal(await engine.api.models.HeldDelivery.countDocuments({ workflow_id: wf }), 0);
    assert.equal(await engine.api.models.WorkflowPause.countDocuments({ _id: wf }), 0);
    assert.equal(await engine.api.models.Run.countDocuments({ workflow_id: wf }), 0);
  });

  it('two resumes at once start each held delivery exactly once', async () => {
    const wf = await newWorkflow();
    const trigger = (await admin.post(`/wf/${wf}/triggers/`, { name: 'twice', input_mapping: { title: '/title' } }))
      .body;
    assert.equal((await admin.post(`/wf/${wf}/pause/`, { reason: 'deploy freeze' })).status, 200);
    const titles = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const title of titles) assert.equal((await hooks.post(trigger.url, { title })).status, 202);
    const answers = await Promise.all([admin.post(`/wf/${wf}/resume/`), admin.post(`/wf/${wf}/resume/`)]);
    assert.ok(
      answers.some((a) => a.status === 200),
      answers.map((a) => a.text).join(' | '),
    );
    for (const answer of answers) assert.ok([200, 409].includes(answer.status), answer.text);
    const runs = await runsOf(wf);
    assert.deepEqual(runs.map((r) => r.initial_inputs.in?.title).sort(), titles, 'one run per held delivery');
    assert.equal(await engine.api.models.HeldDelivery.countDocuments({ workflow_id: wf }), 0);
  });

  describe('held deliveries across an api restart', () => {
    let first: ApiProcess | undefined;
    let restarted: ApiProcess | undefined;
    after(async () => {
      await first?.process.stop();
      await restarted?.process.stop();
    });

    it('holds deliveries (202) durably through an api restart, then starts them in the order they arrived on resume, once each', async () => {
      const wf = await newWorkflow();
      const trigger = (
        await admin.post(`/wf/${wf}/triggers/`, {
          name: 'held',
          dedupe_header: 'X-Delivery',
          input_mapping: { title: '/title' },
        })
      ).body;
      assert.equal((await admin.post(`/wf/${wf}/pause/`, { reason: 'deploy freeze' })).status, 200);
      // The api that holds them, as a process of its own (the engine's worker runs what is released).
      first = await startApiProcess(engine.api.env);
      const viaFirst = client(new URL(first.baseUrl).origin);
      const titles = ['first', 'second', 'third'];
      for (const [i, title] of titles.entries()) {
        const res = await viaFirst.request('POST', trigger.url, { title }, { 'X-Delivery': `d-${i}` });
        assert.equal(res.status, 202, res.text);
        assert.equal(res.body.held, true);
        assert.match(res.body.detail, new RegExp(`^Workflow ${wf} is ${TAG.source}: the delivery is held`));
      }
      const again = await viaFirst.request(
        'POST',
        trigger.url,
        { title: 'second, sent again' },
        { 'X-Delivery': 'd-1' },
      );
      assert.equal(again.status, 202, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true', 'a redelivery is held once');
      assert.deepEqual(await runsOf(wf), []);

      await first.process.stop('SIGKILL');
      first = undefined;
      restarted = await startApiProcess(engine.api.env);
      const viaRestarted = client(restarted.baseUrl, bearer(KEY));
      assert.equal((await viaRestarted.get(`/wf/${wf}/`)).body.paused.held_deliveries, 3, 'still held');

      const resumed = await viaRestarted.post(`/wf/${wf}/resume/`);
      assert.equal(resumed.status, 200, resumed.text);
      assert.equal(resumed.body.released_deliveries, 3);
      assert.equal(await engine.api.models.HeldDelivery.countDocuments({ workflow_id: wf }), 0);
      const runs = (await runsOf(wf)).sort((a, b) => Date.parse(a.start_time) - Date.parse(b.start_time));
      assert.deepEqual(
        runs.map((r) => r.initial_inputs.in?.title),
        titles,
        'started in the order they arrived',
      );
      for (const run of runs) {
        assert.equal(run.run_type, 'webhook');
        assert.equal(run.trigger?.id, trigger.id);
        assert.equal((await waitForRun(admin, run.id)).status, 'COMPLETED');
      }
      // The delivery id now names its run: sent again, it starts nothing and answers that run.
      const late = await hooks.request('POST', trigger.url, { title: 'second, late' }, { 'X-Delivery': 'd-1' });
      assert.equal(late.status, 202, late.text);
      assert.deepEqual(late.body, { run_id: runs[1]?.id });
      assert.equal((await runsOf(wf)).length, 3);
    });

    it('an api killed while resuming leaves the workflow paused while deliveries are held; the next resume starts each once, in order', async () => {
      const wf = await newWorkflow();
      const trigger = (
        await admin.post(`/wf/${wf}/triggers/`, {
          name: 'crash',
          input_mapping: { title: '/title' },
          rate_per_second: 1000,
        })
      ).body;
      assert.equal((await admin.post(`/wf/${wf}/pause/`, { reason: 'deploy freeze' })).status, 200);
      const titles = Array.from({ length: MAX_HELD }, (_, i) => `t${i}`);
      for (const title of titles) assert.equal((await hooks.post(trigger.url, { title })).status, 202);
      // The restarted api of the test before, when there is one: each start of a process costs seconds.
      const doomed = restarted ?? (await startApiProcess(engine.api.env));
      restarted = undefined;
      first = doomed;
      const resuming = client(doomed.baseUrl, bearer(KEY))
        .post(`/wf/${wf}/resume/`)
        .catch(() => null);
      // Killed once its first run is recorded: mid-release, unless the whole release beat the poll.
      await eventually('a released run', async () => ((await runsOf(wf)).length > 0 ? true : undefined), 30_000);
      await doomed.process.stop('SIGKILL');
      first = undefined;
      await resuming;
      const left = await engine.api.models.HeldDelivery.countDocuments({ workflow_id: wf });
      const stillPaused = (await pausedOf(wf)) !== null;
      if (left > 0) assert.ok(stillPaused, `killed with ${left} held: the workflow is still paused`);
      const again = await admin.post(`/wf/${wf}/resume/`);
      assert.equal(again.status, stillPaused || left > 0 ? 200 : 409, again.text);
      assert.equal(await pausedOf(wf), null);
      // An api killed between inserting a run and claiming its key leaves a run no key names: it never
      // starts (no workflow), and the reconciler removes it, as for any keyed request.
      const runs = (await runsOf(wf)).sort((a, b) => Date.parse(a.start_time) - Date.parse(b.start_time));
      const started: Run[] = [];
      for (const run of runs) {
        const handle = engine.api.temporal.workflow.getHandle(
          runWorkflowId(run.id, engine.api.env.SPUR_WORKFLOW_ID_PREFIX),
        );
        if (
          await handle.describe().then(
            () => true,
            () => false,
          )
        )
          started.push(run);
        else assert.equal(run.status, 'PENDING', `run ${run.id} has no workflow: it never started`);
      }
      assert.deepEqual(
        started.map((r) => r.initial_inputs.in?.title),
        titles,
        'each held delivery started one run, in the order they arrived',
      );
      assert.ok(runs.length - started.length <= 1, 'at most the one run the kill cut off unclaimed');
      for (const run of started) assert.equal((await waitForRun(admin, run.id)).status, 'COMPLETED');
    });
  });

  describe('who may pause', () => {
    let other: Http;
    let viewer: Http;

    before(async () => {
      const team = await admin.post('/access/workspaces/', { name: 'team-b' });
      assert.equal(team.status, 201, team.text);
      other = client(engine.api.baseUrl, bearer((await memberWithKey(admin, team.body.id, 'bob', 'admin')).key.key));
      viewer = client(engine.api.baseUrl, bearer((await userWithKey(admin, 'vic', 'viewer')).key.key));
    });

    it("another workspace's key cannot pause or resume a workflow (404) and changes nothing", async () => {
      const running = await newWorkflow();
      const paused = await newWorkflow();
      assert.equal((await admin.post(`/wf/${paused}/pause/`, { reason: 'deploy freeze' })).status, 200);
      const before = await pausedOf(paused);
      const refused = [
        await other.post(`/wf/${running}/pause/`, { reason: 'hijack' }),
        await other.post(`/wf/${paused}/resume/`),
        await other.post(`/wf/${paused}/pause/`, { reason: 'hijack' }),
      ];
      for (const res of refused) {
        assert.equal(res.status, 404, res.text);
        assert.doesNotMatch(res.text, /deploy freeze/, "nothing of the other workspace's pause is shown");
      }
      assert.equal(await pausedOf(running), null);
      assert.deepEqual(await pausedOf(paused), before);
    });

    it('a viewer may not pause or resume (403) and changes nothing', async () => {
      const running = await newWorkflow();
      const paused = await newWorkflow();
      assert.equal((await admin.post(`/wf/${paused}/pause/`, { reason: 'deploy freeze' })).status, 200);
      const before = await pausedOf(paused);
      for (const res of [await viewer.post(`/wf/${running}/pause/`, {}), await viewer.post(`/wf/${paused}/resume/`)]) {
        assert.equal(res.status, 403, res.text);
        assert.match(res.body.detail, /run/);
      }
      assert.equal(await pausedOf(running), null);
      assert.deepEqual(await pausedOf(paused), before);
    });
  });
});
