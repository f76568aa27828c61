// Spur's console (/console/) in headless Chromium, signed in with a password: the runs list with
// its filters, a run's page with its timeline, cancel and rerun, and what a viewer is shown.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { hashApiKey } from '../../src/http/api-keys';
import { bearer, makeUser } from '../support/access';
import { waitForRun } from '../support/engine';
import { input, l, n } from '../support/graphs';
import { client } from '../support/http';
import { assertNoProblems, startUiStack, type UiStack } from '../support/ui';

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

/** axe-core's own script, injected into the page under test (it is not part of the console). */
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

describe('browser: the console', function () {
  this.timeout(240_000);
  let stack: UiStack;
  let admin: ReturnType<typeof client>;
  let done: { id: string; workflow_id: string };
  let paused: { id: string };

  before(async () => {
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
  after(async () => stack?.close());

  async function signIn(user: { username: string; password: string }, path: string) {
    const { page, origin } = stack;
    await page.goto('about:blank');
    await stack.browser.context.clearCookies();
    await page.goto(`${origin}${path}`);
    await page.waitForURL(/\/login\?next=/);
    const form = page.getByRole('form', { name: 'Sign in with a password' });
    await form.getByLabel('Username').fill(user.username);
    await form.getByLabel('Password', { exact: true }).fill(user.password);
    await form.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${origin}${path}`);
  }

  async function seriousAccessibilityProblems(): Promise<string[]> {
    await stack.page.addScriptTag({ content: AXE });
    const found = await stack.page.evaluate(async () => {
      const axe = (
        globalThis as unknown as {
          axe: { run(): Promise<{ violations: Array<{ id: string; impact: string | null; help: string }> }> };
        }
      ).axe;
      return (await axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help }));
    });
    return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
  }

  it('an operator signs in, lists the runs the test made, and a status filter keeps only the matching ones', async () => {
    const { page } = stack;
    await signIn(OPERATOR, '/console/runs');
    await page.locator(`tr[data-run="${done.id}"]`).waitFor();
    await page.locator(`tr[data-run="${paused.id}"]`).waitFor();
    assert.match(await page.locator(`tr[data-run="${paused.id}"]`).innerText(), /PAUSED/);
    assert.deepEqual(await seriousAccessibilityProblems(), []);

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
    assert.deepEqual(await seriousAccessibilityProblems(), []);

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

  it('a viewer sees the runs and a run, and no cancel or rerun', async () => {
    const gw = (await admin.post('/wf/', { name: 'console gated 2', definition: gated })).body;
    const open = (await admin.post(`/wf/${gw.id}/start_run/`, { initial_inputs: { in: { x: 'v' } } })).body;
    await waitForRun(admin, open.id, (r) => r.status === 'PAUSED');
    const { page, origin } = stack;
    await signIn(VIEWER, `/console/runs/${open.id}`);
    await page.getByRole('heading', { name: `Run ${open.id} PAUSED` }).waitFor();
    await page.locator('tr[data-node="gate"]').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Cancel run' }).count(), 0);
    await page.goto(`${origin}/console/runs/${done.id}`);
    await page.getByRole('heading', { name: `Run ${done.id} COMPLETED` }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Rerun' }).count(), 0);
    assertNoProblems(stack.browser);
  });
});
