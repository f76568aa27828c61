// Spur's console (/console/) in headless Chromium, signed in with a password: the runs list with
// its filters, a run's page with its timeline, cancel and rerun, and what a viewer is shown.
import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, makeUser } from '../support/access';
import { waitForRun } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { seriousAccessibilityProblems, signIn } from '../support/console';
import { assertNoProblems, startUiStack, type UiStack } from '../support/ui';
import { type FakeLlmServer, startFakeLlmServer } from '../support/fake-llm-server';
import { fakeProviderSettings } from '../support/llm-engine';

const ADMIN_KEY = 'spur_console-admin-key-0123456789';
const OPERATOR = { username: 'olga-operator', password: 'an operator password' };
const VIEWER = { username: 'vera-viewer', password: 'a viewer password' };

const straight = {
  nodes: [input(), n('out', 'OutputNode', { output_map: { x: 'in.x' } })],
  links: [l('in', 'out')],
};
const gated = {
  nodes: [
    input(),
    n('gate', 'HumanInterventionNode', { message: 'ok?' }),
    n('out', 'OutputNode', { output_map: { x: 'gate.in.x' } }),
  ],
  links: [l('in', 'gate'), l('gate', 'out')],
};

describe('browser: the console', function () {
  this.timeout(240_000);
  let stack: UiStack;
  let admin: ReturnType<typeof client>;
  let done: { id: string; workflow_id: string };
  let paused: { id: string };
  let fake: FakeLlmServer;

  before(async () => {
    fake = await startFakeLlmServer();
    stack = await startUiStack({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY) });
    admin = client(stack.engine.api.baseUrl, bearer(ADMIN_KEY));
    await makeUser(admin, { ...OPERATOR, role: 'operator' });
    await makeUser(admin, { ...VIEWER, role: 'viewer' });
    const wf = (await admin.post('/wf/', { name: 'console straight', definition: straight })).body;
    done = (await admin.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x: 'hello' } } })).body;
    const [listed] = (await admin.get(`/wf/${wf.id}/runs/`)).body;
    done = listed;
    const gw = (await admin.post('/wf/', { name: 'console gated', definition: gated })).body;
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
    assert.deepEqual(await seriousAccessibilityProblems(stack.page), []);

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
    assert.deepEqual(await seriousAccessibilityProblems(stack.page), []);

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
    const gw = (await admin.post('/wf/', { name: 'console gated inbox', definition: gated })).body;
    const open = (await admin.post(`/wf/${gw.id}/start_run/`, { initial_inputs: { in: { x: 'needs a yes' } } })).body;
    await waitForRun(admin, open.id, (r) => r.status === 'PAUSED');
    const { page, origin } = stack;
    await signIn(stack, OPERATOR, '/console/approvals');
    const card = page.locator(`article[data-run="${open.id}"]`);
    await card.waitFor();
    assert.match(await card.innerText(), /needs a yes/);
    assert.deepEqual(await seriousAccessibilityProblems(stack.page), []);
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
    assert.deepEqual(await seriousAccessibilityProblems(stack.page), []);
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
    assert.deepEqual(await seriousAccessibilityProblems(stack.page), []);
    await page.getByLabel('Group by').selectOption('model');
    await page.locator(`tr[data-key="${model}"]`).waitFor();
    assertNoProblems(stack.browser);
  });

  it('a viewer sees the runs and a run, and no cancel or rerun', async () => {
    const gw = (await admin.post('/wf/', { name: 'console gated 2', definition: gated })).body;
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
});
