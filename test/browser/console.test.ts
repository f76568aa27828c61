// Spur's console (/console/) in headless Chromium, signed in with a password: the runs list with
// its filters, a run's page with its timeline, cancel and rerun, and what a viewer is shown.
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, makeUser } from '../support/access';
import { gated } from '../support/approvals';
import { waitForRun } from '../support/engine';
import { until } from '../support/exec-log';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { seriousAccessibilityProblems, signIn } from '../support/console';
import { assertNoProblems, startUiStack, type UiStack } from '../support/ui';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server';
import { startFakeHttpApi } from '../support/fake-http-api';
import { fakeProviderSettings } from '../support/llm-engine';

const ADMIN_KEY = 'spur_console-admin-key-0123456789';
const OPERATOR = { username: 'olga-operator', password: 'an operator password' };
const VIEWER = { username: 'vera-viewer', password: 'a viewer password' };
const BUILDER = { username: 'bill-builder', password: 'a builder password' };
const ADMIN = { username: 'ada-admin', password: 'an admin password' };

const straight = {
  nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })],
  links: [l('in', 'out')],
};

describe('browser: the console', function () {
  this.timeout(240_000);
  let stack: UiStack;
  let admin: ReturnType<typeof client>;
  let done: { id: string; workflow_id: string };
  let paused: { id: string };
  let fake: FakeLlmServer;
  let builderId: string;

  before(async () => {
    fake = await startFakeLlmServer();
    // The fake HTTP API of the retried node is on loopback, which the outbound client refuses by default.
    stack = await startUiStack({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY), SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' });
    admin = client(stack.engine.api.baseUrl, bearer(ADMIN_KEY));
    await makeUser(admin, { ...OPERATOR, role: 'operator' });
    await makeUser(admin, { ...VIEWER, role: 'viewer' });
    builderId = (await makeUser(admin, { ...BUILDER, role: 'builder' })).id;
    await makeUser(admin, { ...ADMIN, role: 'admin' });
    const wf = (await admin.post('/wf/', { name: 'console straight', definition: straight })).body;
    done = (await admin.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x: 'hello' } } })).body;
    const [listed] = (await admin.get(`/wf/${wf.id}/runs/`)).body;
    done = listed;
    const gw = (await admin.post('/wf/', { name: 'console gated', definition: gated({}, 'ok?') })).body;
    paused = (await admin.post(`/wf/${gw.id}/start_run/`, { initial_inputs: { in: { x: 'wait' } } })).body;
    await waitForRun(admin, paused.id, (r) => r.status === 'PAUSED');
  });
  after(async () => {
    await stack?.close();
    await fake?.close();
  });

  it('an operator signs in, lists the runs the test made, and a status filter keeps only the matching ones', async () => {
    const { page } = stack;
    await signIn(stack, OPERATOR, '/console/runs');
    await page.locator(`tr[data-run="${done.id}"]`).waitFor();
    await page.locator(`tr[data-run="${paused.id}"]`).waitFor();
    assert.match(await page.locator(`tr[data-run="${paused.id}"]`).innerText(), /PAUSED/);
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);

    await page.getByLabel('Status').selectOption('COMPLETED');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=COMPLETED/);
    await page.locator(`tr[data-run="${done.id}"]`).waitFor();
    assert.equal(await page.locator(`tr[data-run="${paused.id}"]`).count(), 0);
    assertNoProblems(stack.browser);
  });

  it("a run's page shows a timeline bar and a task row for each node; rerun from a node starts a run the API reports", async () => {
    const { page, origin } = stack;
    await page.goto(`${origin}/console/runs/${done.id}`);
    await page.getByRole('heading', { name: `Run ${done.id} COMPLETED` }).waitFor();
    const tasks = (await admin.get(`/run/${done.id}/`)).body.tasks;
    for (const node of ['in', 'out']) {
      assert.equal(
        await page.locator(`svg g[data-node="${node}"] rect[data-kind="run"]`).count(),
        1,
        `${node}: ${JSON.stringify(tasks)} ${await page.locator('svg').innerHTML()}`,
      );
      await page.locator(`tr[data-node="${node}"]`).waitFor();
    }
    assert.match(await page.locator('pre.json').first().innerText(), /"hello"/);
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);

    await page.getByLabel('Rerun from').selectOption('in');
    await page.getByRole('button', { name: 'Rerun' }).click();
    await page.waitForURL(
      (url) => /\/console\/runs\/R\d+$/.test(url.pathname) && !url.pathname.endsWith(`/${done.id}`),
    );
    const rerunId = page.url().split('/').at(-1) as string;
    const rerun = (await admin.get(`/run/${rerunId}/`)).body;
    assert.deepEqual([rerun.rerun_of, rerun.rerun_from_node_id], [done.id, 'in']);
    assertNoProblems(stack.browser);
  });

  it("a retried node's failed attempt is a bar of its own before the attempt that answered", async () => {
    const api = await startFakeHttpApi();
    try {
      api.script('/v1/flaky', { status: 503, body: 'busy' }, { status: 200, body: { ok: true } });
      const definition = {
        nodes: [input(), n('fetch', 'HTTPRequestNode', { url: `${api.url}/v1/flaky` })],
        links: [l('in', 'fetch')],
      };
      const wf = (await admin.post('/wf/', { name: 'console retried', definition })).body;
      const started = (await admin.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'r' } } })).body;
      const ended = await waitForRun(admin, started.id, undefined, 60_000);
      assert.equal(ended.status, 'COMPLETED', ended.message ?? '');
      const { page, origin } = stack;
      await page.goto(`${origin}/console/runs/${started.id}`);
      const row = page.locator('svg g[data-node="fetch"]');
      await row.locator('rect[data-kind="run"]').waitFor();
      assert.equal(await row.locator('rect[data-kind="attempt"]').count(), 1);
      assert.match(
        (await row.locator('rect[data-kind="attempt"] title').textContent()) ?? '',
        /attempt 1 failed: .*503/,
      );
      assertNoProblems(stack.browser);
    } finally {
      await api.close();
    }
  });

  it('cancel on a paused run’s page: the API then reports it CANCELED, and the page shows it', async () => {
    const { page, origin } = stack;
    await page.goto(`${origin}/console/runs/${paused.id}`);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    const ended = await waitForRun(admin, paused.id, (r) => r.status === 'CANCELED', 60_000);
    assert.equal(ended.status, 'CANCELED');
    await page.getByRole('heading', { name: `Run ${paused.id} CANCELED` }).waitFor();
    assertNoProblems(stack.browser);
  });

  it('the approvals inbox shows a pause with its input; approve with a comment resumes the run, as the API reports', async () => {
    const gw = (await admin.post('/wf/', { name: 'console gated inbox', definition: gated({}, 'ok?') })).body;
    const open = (await admin.post(`/wf/${gw.id}/start_run/`, { initial_inputs: { in: { x: 'needs a yes' } } })).body;
    await waitForRun(admin, open.id, (r) => r.status === 'PAUSED');
    const { page, origin } = stack;
    await signIn(stack, OPERATOR, '/console/approvals');
    const card = page.locator(`article[data-run="${open.id}"]`);
    await card.waitFor();
    assert.match(await card.innerText(), /needs a yes/);
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);
    await card.getByLabel('Comment').fill('looks right');
    await card.getByRole('button', { name: 'Approve' }).click();
    const ended = await waitForRun(admin, open.id, (r) => r.status === 'COMPLETED', 60_000);
    assert.equal(ended.status, 'COMPLETED');
    const [pause] = (await admin.get(`/wf/pause_history/${open.id}/`)).body;
    assert.deepEqual([pause.resume_action, pause.comments], ['APPROVE', 'looks right']);
    await card.waitFor({ state: 'detached' });
    assert.ok(page.url().startsWith(`${origin}/console/approvals`));
    assertNoProblems(stack.browser);
  });

  it('the inbox: override with data, a pause named for someone else only to read, and a run’s pause history', async () => {
    const twoGates = {
      nodes: [
        input(),
        n('first', 'HumanInterventionNode', { message: 'first gate' }),
        n('second', 'HumanInterventionNode', { message: 'second gate' }),
        n('out', 'OutputNode', { output_map: { x: 'second.first.in.x' } }),
      ],
      links: [l('in', 'first'), l('first', 'second'), l('second', 'out')],
    };
    const named = {
      nodes: [
        input(),
        n('gate', 'HumanInterventionNode', { message: 'only the builder', approvers: { users: [builderId] } }),
        n('out', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
      ],
      links: [l('in', 'gate'), l('gate', 'out')],
    };
    const two = (await admin.post('/wf/', { name: 'console two gates', definition: twoGates })).body;
    const forBill = (await admin.post('/wf/', { name: 'console named approver', definition: named })).body;
    const run = (await admin.post(`/wf/${two.id}/start_run/`, { initial_inputs: { in: { x: 'original' } } })).body;
    const billsRun = (await admin.post(`/wf/${forBill.id}/start_run/`, { initial_inputs: { in: { x: 'b' } } })).body;
    await waitForRun(admin, run.id, (r) => r.status === 'PAUSED');
    await waitForRun(admin, billsRun.id, (r) => r.status === 'PAUSED');
    const first = await admin.post(`/wf/process_pause_action/${run.id}/`, {
      action: 'APPROVE',
      user_id: 'admin',
      inputs: {},
      comments: 'first is fine',
    });
    assert.equal(first.status, 200, first.text);
    await waitForRun(
      admin,
      run.id,
      (r) =>
        r.status === 'PAUSED' &&
        (r as { tasks?: Array<{ node_id: string; status: string }> }).tasks?.some(
          (t) => t.node_id === 'second' && t.status === 'PAUSED',
        ) === true,
    );

    const { page } = stack;
    await signIn(stack, OPERATOR, '/console/approvals');
    const mine = page.locator(`article[data-run="${run.id}"]`);
    await mine.waitFor();
    const bills = page.locator(`article[data-run="${billsRun.id}"]`);
    assert.equal(
      await bills.getByRole('button').count(),
      0,
      'a pause named for the builder offers the operator nothing',
    );
    assert.match(await page.getByRole('heading', { name: /Waiting for someone else/ }).innerText(), /\(\d+\)/);
    await mine.getByText(`Pause history of run ${run.id}`).click();
    await mine.getByText(/first gate at node first.*APPROVE by .* \(first is fine\)/).waitFor();
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);

    await mine.getByLabel('Data').fill('{"first": {"in": {"x": "overridden"}}}');
    await mine.getByRole('button', { name: 'Override' }).click();
    const ended = await waitForRun(admin, run.id, (r) => r.status === 'COMPLETED', 60_000);
    assert.deepEqual(ended.outputs?.out, { x: 'overridden' });

    await signIn(stack, BUILDER, '/console/approvals');
    await page.locator(`article[data-run="${billsRun.id}"]`).getByRole('button', { name: 'Approve' }).waitFor();
    assertNoProblems(stack.browser);
  });

  it('schedules: the list shows when each fires next; pause and unpause change what the API reports', async () => {
    const wf = (await admin.post('/wf/', { name: 'console scheduled', definition: straight })).body;
    const schedule = (
      await admin.post(`/wf/${wf.id}/schedules/`, {
        interval_seconds: 3600,
        initial_inputs: { in: { x: 'tick' } },
        note: 'hourly',
      })
    ).body;
    const { page, origin } = stack;
    await page.goto(`${origin}/console/schedules`);
    const row = page.locator(`tr[data-schedule="${schedule.id}"]`);
    await row.waitFor();
    assert.match(await row.innerText(), /every 3600 s/);
    assert.match(await row.innerText(), /active/);
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);
    await row.getByRole('button', { name: `Pause ${schedule.id}`, exact: true }).click();
    await row.getByRole('button', { name: `Unpause ${schedule.id}`, exact: true }).waitFor();
    assert.equal((await admin.get(`/schedules/${schedule.id}/`)).body.paused, true);
    await row.getByRole('button', { name: `Unpause ${schedule.id}`, exact: true }).click();
    await row.getByRole('button', { name: `Pause ${schedule.id}`, exact: true }).waitFor();
    assert.equal((await admin.get(`/schedules/${schedule.id}/`)).body.paused, false);
    await admin.delete(`/schedules/${schedule.id}/`);
    assertNoProblems(stack.browser);
  });

  it("usage: today's model calls in the table and the chart, and by model", async () => {
    for (const [name, value] of Object.entries(fakeProviderSettings(fake)))
      assert.equal((await admin.post('/env-mgmt/', { name, value })).status, 200);
    const model = 'openai/gpt-4o-mini';
    const llm = {
      nodes: [
        input(),
        n('ask', 'SingleLLMCallNode', { llm_info: { model, max_tokens: 50 }, user_message: 'say {{in.x}}' }),
        n('out', 'OutputNode', { output_map: { answer: 'ask.output' } }),
      ],
      links: [l('in', 'ask'), l('ask', 'out')],
    };
    const wf = (await admin.post('/wf/', { name: 'console usage', definition: llm })).body;
    for (const x of ['a', 'b']) {
      const res = await admin.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x } } });
      assert.equal(res.status, 200, res.text);
    }
    const { page, origin } = stack;
    await page.goto(`${origin}/console/usage`);
    const today = new Date().toISOString().slice(0, 10);
    const row = page.locator(`tr[data-key="${today}"]`);
    await row.waitFor();
    assert.match(await row.innerText(), /\t2\t2\t20\t20$/, 'calls, runs and tokens of the two runs');
    assert.equal(await page.locator('.chart canvas').count(), 1, 'the chart is drawn');
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);
    await page.getByLabel('Group by').selectOption('model');
    await page.locator(`tr[data-key="${model}"]`).waitFor();
    assertNoProblems(stack.browser);
  });

  it('bulk: two of three paused runs selected and cancelled; the API reports those two CANCELED and the third still PAUSED', async () => {
    const gw = (await admin.post('/wf/', { name: 'console bulk', definition: gated({}, 'ok?') })).body;
    const runs: string[] = [];
    for (const x of ['b1', 'b2', 'b3']) {
      const started = await admin.post(`/wf/${gw.id}/start_run/`, { initial_inputs: { in: { x } } });
      runs.push(started.body.id as string);
    }
    for (const id of runs) await waitForRun(admin, id, (r) => r.status === 'PAUSED');
    const [first, second, third] = runs as [string, string, string];
    const { page } = stack;
    await signIn(stack, OPERATOR, `/console/runs?workflow_id=${gw.id}`);
    await page.locator(`tr[data-run="${third}"]`).waitFor();
    await page.getByLabel(`Select run ${first}`, { exact: true }).check();
    await page.getByLabel(`Select run ${third}`, { exact: true }).check();
    await page.getByRole('combobox', { name: 'Action' }).selectOption('cancel');
    await page.getByRole('button', { name: 'Apply to 2 runs' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Bulk cancel RA\S+ completed: 2 canceled/ })
      .waitFor();
    const status = async (id: string) => (await admin.get(`/run/${id}/`)).body.status as string;
    assert.deepEqual(
      [await status(first), await status(second), await status(third)],
      ['CANCELED', 'PAUSED', 'CANCELED'],
    );
    assert.match(await page.locator(`tr[data-run="${first}"]`).innerText(), /CANCELED/, 'the list is read again');
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);
    assertNoProblems(stack.browser);
  });

  it('schedules: a builder creates one, edits it, and backfills a window; the API reports each, the backfill runs the fires in it', async () => {
    const wf = (await admin.post('/wf/', { name: 'console schedule form', definition: straight })).body;
    const { page } = stack;
    await signIn(stack, BUILDER, '/console/schedules');
    await page.getByText('New schedule').click();
    const form = page.getByRole('form', { name: 'New schedule' });
    await form.getByLabel('Workflow').selectOption(wf.id);
    await form.getByLabel('Cron expression').fill('0 9 * * *');
    await form.getByLabel('Initial inputs').fill('{"in": {"x": "from the console"}}');
    await form.getByLabel('While the previous run goes on').selectOption('allow_all');
    await form.getByLabel('Note').fill('mornings');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await form.getByRole('status').filter({ hasText: 'Schedule created' }).waitFor();
    const [made] = (await admin.get(`/wf/${wf.id}/schedules/`)).body;
    assert.deepEqual(
      [made.cron, made.interval_seconds, made.timezone, made.initial_inputs, made.overlap, made.note],
      ['0 9 * * *', null, 'UTC', { in: { x: 'from the console' } }, 'allow_all', 'mornings'],
    );
    const row = page.locator(`tr[data-schedule="${made.id}"]`);
    await row.waitFor();
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);

    await row.getByRole('button', { name: `Edit ${made.id}`, exact: true }).click();
    const edit = page.getByRole('form', { name: `Edit schedule ${made.id}` });
    await edit.getByLabel('Note').fill('mornings, edited');
    await edit.getByRole('button', { name: 'Save schedule' }).click();
    await edit.waitFor({ state: 'detached' });
    assert.equal((await admin.get(`/schedules/${made.id}/`)).body.note, 'mornings, edited');
    assert.equal((await admin.get(`/schedules/${made.id}/`)).body.cron, '0 9 * * *', 'the rest kept');

    // The window is typed in the browser's zone, as the test's own process reads the same text.
    const [from, to] = ['2024-03-08T00:00', '2024-03-10T00:00'];
    const window = [new Date(from).getTime(), new Date(to).getTime()] as const;
    const fires = ['2024-03-07', '2024-03-08', '2024-03-09', '2024-03-10']
      .map((day) => Date.parse(`${day}T09:00:00Z`))
      .filter((t) => t >= window[0] && t < window[1])
      .map((t) => new Date(t).toISOString());
    await row.getByRole('button', { name: `Backfill ${made.id}`, exact: true }).click();
    const backfill = page.getByRole('form', { name: `Backfill schedule ${made.id}` });
    await backfill.getByLabel('From').fill(from);
    await backfill.getByLabel('To').fill(to);
    await backfill.getByRole('button', { name: 'Backfill' }).click();
    await backfill.getByRole('status').waitFor();
    type Scheduled = { status: string; trigger: { scheduled_time?: string } | null };
    const completed = async () =>
      ((await admin.get(`/wf/${wf.id}/runs/?page_size=100`)).body as Scheduled[]).filter(
        (r) => r.status === 'COMPLETED',
      );
    await until('the backfilled runs to complete', async () => (await completed()).length >= fires.length, 90_000);
    const done = await completed();
    assert.deepEqual(done.map((r) => r.trigger?.scheduled_time).sort(), fires);
    await admin.delete(`/schedules/${made.id}/`);
    assertNoProblems(stack.browser);
  });

  it('triggers: a builder creates one, a delivery to its URL shows as a run, rotate gives a new URL and the old one answers 404', async () => {
    const wf = (await admin.post('/wf/', { name: 'console triggers', definition: straight })).body;
    const { page, origin } = stack;
    await signIn(stack, BUILDER, `/console/triggers?workflow_id=${wf.id}`);
    await page.getByText('New trigger').click();
    const form = page.getByRole('form', { name: 'New trigger' });
    await form.getByLabel('Name').fill('from the console');
    await form.getByLabel('Input mapping').fill('{"x": "/message"}');
    await form.getByRole('button', { name: 'Create trigger' }).click();
    await form.getByRole('status').filter({ hasText: 'Trigger from the console created' }).waitFor();
    const [made] = (await admin.get(`/wf/${wf.id}/triggers/`)).body;
    assert.deepEqual([made.name, made.input_mapping], ['from the console', { x: '/message' }]);
    const card = page.locator(`article[data-trigger="${made.id}"]`);
    await card.waitFor();
    assert.equal(await card.locator('code.url').innerText(), `${origin}${made.url}`);

    const delivered = await fetch(`${origin}${made.url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'hooked' }),
    });
    assert.equal(delivered.status, 202);
    const { run_id: runId } = (await delivered.json()) as { run_id: string };
    assert.equal((await waitForRun(admin, runId)).outputs?.out?.x, 'hooked');
    await page.reload();
    await card.locator(`tr[data-run="${runId}"]`).waitFor();
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);

    await card.getByRole('button', { name: 'Rotate URL' }).click();
    await card.getByRole('button', { name: 'Yes, rotate the URL' }).click();
    await card.getByRole('status').filter({ hasText: 'has a new URL' }).waitFor();
    const rotated = (await admin.get(`/triggers/${made.id}/`)).body;
    assert.notEqual(rotated.url, made.url);
    await card.locator('code.url').filter({ hasText: rotated.url }).waitFor();
    const old = await fetch(`${origin}${made.url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(old.status, 404, 'the old URL is gone');

    await card.getByRole('button', { name: 'Edit' }).click();
    const edit = card.getByRole('form', { name: 'Edit trigger from the console' });
    await edit.getByLabel('Name').fill('renamed in the console');
    await edit.getByRole('button', { name: 'Save trigger' }).click();
    await page.getByRole('heading', { name: 'renamed in the console' }).waitFor();
    // A name is text on the page, whatever markup it holds.
    const hostile = '<img src=x onerror="globalThis.__pwned=1">';
    const marked = (await admin.post(`/wf/${wf.id}/triggers/`, { name: hostile })).body;
    await page.reload();
    await page.getByRole('heading', { name: hostile }).waitFor();
    assert.equal(await page.locator(`article[data-trigger="${marked.id}"] img`).count(), 0);
    assert.equal(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned), undefined);
    const saved = (await admin.get(`/triggers/${made.id}/`)).body;
    assert.deepEqual(
      [saved.name, saved.url, saved.input_mapping],
      ['renamed in the console', rotated.url, { x: '/message' }],
    );
    assertNoProblems(stack.browser);
  });

  it('usage: a budget with what its workflow spent today; a limit whose breaker an admin opens and closes, as the API then reports', async () => {
    const wf = (await admin.post('/wf/', { name: 'console budget', definition: straight })).body;
    assert.equal((await admin.put(`/wf/${wf.id}/budget/`, { per_day_usd: 2, on_exceed: 'pause' })).status, 200);
    assert.equal((await admin.put('/limits/', [{ key: 'openai', requests_per_minute: 600 }])).status, 200);
    const { page } = stack;
    await signIn(stack, ADMIN, '/console/usage');
    const budget = page.locator(`tr[data-workflow="${wf.id}"]`);
    await budget.waitFor();
    assert.match(await budget.innerText(), /\$0 of \$2\.00 \(0 %\)/);
    const limit = page.locator('table[data-scope="workspace"] tr[data-key="openai"]');
    await limit.waitFor();
    assert.match(await limit.innerText(), /600 requests\/min/);
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);

    const breakerState = async () =>
      ((await admin.get('/limits/')).body as Array<{ key: string; breaker_state?: { state: string } }>).find(
        (l) => l.key === 'openai',
      )?.breaker_state?.state ?? 'closed';
    const reaches = async (state: string) => {
      await until(`the breaker to be ${state}`, async () => (await breakerState()) === state, 30_000);
      assert.equal(await breakerState(), state);
    };
    await limit.getByRole('button', { name: 'Open breaker of openai' }).click();
    await reaches('open');
    await page.reload();
    await limit.getByRole('button', { name: 'Close breaker of openai' }).click();
    await reaches('closed');
    assert.equal((await admin.put('/limits/', [])).status, 200);
    assertNoProblems(stack.browser);
  });

  it('a viewer sees the runs and a run, and no cancel or rerun', async () => {
    const gw = (await admin.post('/wf/', { name: 'console gated 2', definition: gated({}, 'ok?') })).body;
    const open = (await admin.post(`/wf/${gw.id}/start_run/`, { initial_inputs: { in: { x: 'v' } } })).body;
    await waitForRun(admin, open.id, (r) => r.status === 'PAUSED');
    const { page, origin } = stack;
    await signIn(stack, VIEWER, `/console/runs/${open.id}`);
    await page.getByRole('heading', { name: `Run ${open.id} PAUSED` }).waitFor();
    await page.locator('tr[data-node="gate"]').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Cancel run' }).count(), 0);
    await page.goto(`${origin}/console/runs/${done.id}`);
    await page.getByRole('heading', { name: `Run ${done.id} COMPLETED` }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Rerun' }).count(), 0);
    // The inbox lists the open pause, but offers a viewer no decision.
    await page.goto(`${origin}/console/approvals`);
    await page.locator(`article[data-run="${open.id}"]`).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Approve' }).count(), 0);
    assertNoProblems(stack.browser);
  });

  it('a viewer is offered no selection, schedule or trigger change, breaker switch, nor a trigger’s URL', async () => {
    const wf = (await admin.post('/wf/', { name: 'console viewer screens', definition: straight })).body;
    const hook = (await admin.post(`/wf/${wf.id}/triggers/`, { name: 'viewer sees this' })).body;
    const schedule = (
      await admin.post(`/wf/${wf.id}/schedules/`, { interval_seconds: 3600, initial_inputs: { in: { x: 'v' } } })
    ).body;
    assert.equal((await admin.put('/limits/', [{ key: 'openai', max_concurrent: 2 }])).status, 200);
    const { page, origin } = stack;
    await signIn(stack, VIEWER, '/console/runs');
    await page.locator(`tr[data-run="${done.id}"]`).waitFor();
    assert.equal(await page.getByRole('checkbox').count(), 0, 'no selection');
    await page.goto(`${origin}/console/schedules`);
    await page.locator(`tr[data-schedule="${schedule.id}"]`).waitFor();
    assert.equal(await page.getByText('New schedule').count(), 0);
    assert.equal(await page.getByRole('button').filter({ hasText: schedule.id }).count(), 0);
    await page.goto(`${origin}/console/triggers?workflow_id=${wf.id}`);
    const card = page.locator(`article[data-trigger="${hook.id}"]`);
    await card.waitFor();
    assert.equal(await card.getByRole('button').count(), 0, 'no edit, rotate or delete');
    assert.equal(await page.getByText('New trigger').count(), 0);
    assert.ok(!(await page.content()).includes(hook.url), 'the URL, a credential, is not on the page');
    await page.goto(`${origin}/console/usage`);
    await page.locator('table[data-scope="workspace"] tr[data-key="openai"]').waitFor();
    assert.equal(await page.getByRole('button', { name: /breaker/ }).count(), 0);
    await admin.delete(`/schedules/${schedule.id}/`);
    assert.equal((await admin.put('/limits/', [])).status, 200);
    assertNoProblems(stack.browser);
  });
});
