// The screenshots of PySpur's UI on Spur (docs/web-ui.md), one per flow the browser tests cover. Run by
// `npm run screenshots` (scripts/screenshots.ts) inside the test harness: real Temporal, FerretDB,
// api and worker, headless chromium, nothing leaving the machine. Never part of `npm test`.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { hashApiKey } from '../../src/http/api-keys';
import { waitForRun } from '../../test/support/engine';
import { twoVersions, waitForComparison, waitForEval } from '../../test/support/evals';
import {
  addNode,
  connect,
  createSpur,
  openDashboard,
  runCleaningTemplate,
  startUiStack,
  type UiStack,
} from '../../test/support/ui';
import { REPO_ROOT } from '../lib/tools';

const OUT = path.join(REPO_ROOT, 'docs', 'screenshots');
async function shot(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('networkidle'); // icons arrive after the page has rendered
  await page.screenshot({ path: path.join(OUT, `${name}.png`) });
}

describe('screenshots of the web UI', function () {
  this.timeout(600_000);
  let stack: UiStack;
  before(async () => {
    stack = await startUiStack();
  });
  after(async () => stack?.close());

  it('dashboard and human-task inbox', async () => {
    const { page, engine } = stack;
    await openDashboard(stack, true); // PySpur welcomes a browser while there are no workflows yet
    const templates = (await engine.http.get('/templates/')).body as { file_name: string }[];
    const wf = (
      await engine.http.post(
        '/templates/instantiate/',
        templates.find((t) => t.file_name === 'approval-flow.json')!,
      )
    ).body;
    const run = (
      await engine.http.post(`/wf/${wf.id}/start_run/`, {
        initial_inputs: { request: { requester: 'Grace', amount: 900, purpose: 'A new laptop' } },
      })
    ).body;
    await waitForRun(engine.http, run.id, (r) => r.status === 'PAUSED', 60_000);
    await openDashboard(stack, false);
    await page.getByText('Expense approval with a human pause').first().waitFor();
    await shot(page, 'dashboard');
    await page.getByText('Spurs Awaiting Human Approval').scrollIntoViewIfNeeded();
    await page.getByRole('button', { name: 'Approve', exact: true }).waitFor();
    await shot(page, 'inbox');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await waitForRun(engine.http, run.id, undefined, 60_000);
  });

  it('a new spur with a node added and connected', async () => {
    const { page } = stack;
    await openDashboard(stack, false);
    await createSpur(page);
    const added = await addNode(page, 'Python', 'Python Function', 'PythonFuncNode');
    await connect(page, 'input_node', added);
    await page.locator('[data-node-panel] button').first().click();
    await shot(page, 'editor-new-spur');
  });

  it('a template run from the editor, and its trace', async () => {
    const { page } = stack;
    const run = await runCleaningTemplate(stack); // the editor now shows every node's output
    await shot(page, 'editor-run');
    await page.goto(`${stack.origin}/trace/${run.id}`);
    await page.getByText('Ada Lovelace').first().waitFor();
    await shot(page, 'trace');
  });

  it('the login page', async () => {
    const secured = await startUiStack({ SPUR_API_KEY_HASHES: hashApiKey('spur_screenshot-key') });
    try {
      await secured.page.goto(`${secured.origin}/dashboard`);
      await secured.page.getByLabel('Username').fill('alice');
      await secured.page.getByLabel('Password', { exact: true }).fill('not her password');
      await secured.page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await secured.page.getByRole('alert').waitFor();
      await shot(secured.page, 'login');
    } finally {
      await secured.close();
    }
  });

  it('the console: the runs list and a run with its timeline', async () => {
    const { page, engine, origin } = stack;
    const definition = {
      nodes: [
        { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } },
        {
          id: 'wait',
          title: 'wait',
          node_type: 'PythonFuncNode',
          config: {
            code: 'import time\ntime.sleep(1)\nreturn {"y": input_model["in"]["x"]}',
            output_schema: { y: 'string' },
          },
        },
        { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { y: 'wait.y' } } },
      ],
      links: [
        { source_id: 'in', target_id: 'wait' },
        { source_id: 'wait', target_id: 'out' },
      ],
    };
    const wf = (await engine.http.post('/wf/', { name: 'Console example', definition })).body;
    const run = (await engine.http.post(`/wf/${wf.id}/start_run/`, { initial_inputs: { in: { x: 'hello' } } })).body;
    await waitForRun(engine.http, run.id, undefined, 60_000);
    await page.goto(`${origin}/console/runs`);
    await page.locator(`tr[data-run="${run.id}"]`).waitFor();
    await shot(page, 'console-runs');
    await page.goto(`${origin}/console/runs/${run.id}`);
    await page.locator('svg g[data-node="wait"]').waitFor();
    await shot(page, 'console-run');

    const gated = {
      nodes: [
        { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { x: 'string' } } },
        { id: 'gate', title: 'gate', node_type: 'HumanInterventionNode', config: { message: 'Send the refund?' } },
        { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { x: 'gate.in.x' } } },
      ],
      links: [
        { source_id: 'in', target_id: 'gate' },
        { source_id: 'gate', target_id: 'out' },
      ],
    };
    const gw = (await engine.http.post('/wf/', { name: 'Refund approval', definition: gated })).body;
    const open = (await engine.http.post(`/wf/${gw.id}/start_run/`, { initial_inputs: { in: { x: '€120 to Ada' } } }))
      .body;
    await waitForRun(engine.http, open.id, (r) => r.status === 'PAUSED', 60_000);
    await page.goto(`${origin}/console/approvals`);
    await page.locator(`article[data-run="${open.id}"]`).waitFor();
    await shot(page, 'console-approvals');

    await engine.http.post(`/wf/${wf.id}/schedules/`, {
      interval_seconds: 3600,
      initial_inputs: { in: { x: 'tick' } },
      note: 'hourly',
    });
    await page.goto(`${origin}/console/schedules`);
    await page.locator('tr[data-schedule]').first().waitFor();
    await shot(page, 'console-schedules');

    await page.goto(`${origin}/console/usage`);
    await page.locator('table.usage').waitFor();
    await shot(page, 'console-usage');
  });

  it('the console: a webhook trigger with its deliveries', async () => {
    const { page, engine, origin } = stack;
    const definition = {
      nodes: [
        { id: 'in', title: 'in', node_type: 'InputNode', config: { output_schema: { title: 'string' } } },
        { id: 'out', title: 'out', node_type: 'OutputNode', config: { output_map: { title: 'in.title' } } },
      ],
      links: [{ source_id: 'in', target_id: 'out' }],
    };
    const wf = (await engine.http.post('/wf/', { name: 'Pull request triage', definition })).body;
    const hook = (
      await engine.http.post(`/wf/${wf.id}/triggers/`, {
        name: 'GitHub pull requests',
        input_mapping: { title: '/pull_request/title' },
        dedupe_header: 'X-GitHub-Delivery',
      })
    ).body;
    for (const title of ['Fix the login page', 'Add a retry to the exporter'])
      await fetch(`${origin}${hook.url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-github-delivery': title },
        body: JSON.stringify({ pull_request: { title } }),
      });
    await page.goto(`${origin}/console/triggers?workflow_id=${wf.id}`);
    await page.locator(`article[data-trigger="${hook.id}"] tr[data-run]`).nth(1).waitFor();
    await shot(page, 'console-triggers');
  });

  it('the console: access (users, keys, workspaces, the audit trail)', async () => {
    const { page, engine, origin } = stack;
    const made = async (apiPath: string, body: Record<string, unknown>) => {
      const res = await engine.http.post(apiPath, body);
      if (res.status !== 201) throw new Error(`POST ${apiPath}: ${res.status} ${res.text}`);
      return res.body as { id: string };
    };
    const grace = await made('/access/users/', { username: 'grace', role: 'admin', password: 'a long password' });
    const lin = await made('/access/users/', { username: 'lin', role: 'operator', password: 'a long password' });
    await made('/access/users/', { username: 'sam', role: 'viewer', password: 'a long password' });
    await made('/access/keys/', { name: 'CI deploys', user_id: lin.id });
    await made('/access/keys/', { name: 'Nightly report', user_id: grace.id, role: 'viewer' });
    const research = await made('/access/workspaces/', { name: 'Research' });
    await engine.http.put(`/access/workspaces/${research.id}/members/${lin.id}`, { role: 'builder' });
    await page.goto(`${origin}/console/access`);
    await page.locator('table.audit tbody tr').first().waitFor();
    await page.getByRole('button', { name: 'Members of Research' }).click();
    await page.locator(`tr[data-member="${lin.id}"]`).waitFor();
    await page.getByRole('button', { name: 'Verify the chain' }).click();
    await page.getByText('The chain is intact').waitFor();
    // The whole page: the audit trail is below the fold.
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: path.join(OUT, 'console-access.png'), fullPage: true });
  });

  it('the console: the Evals screen and a comparison', async () => {
    const { page, engine, origin } = stack;
    const { suite, workflowId } = await twoVersions(engine.http, 'Letters');
    const launched = await engine.http.post('/evals/launch/', {
      workflow_id: workflowId,
      eval_name: suite.name,
      output_variable: 'out-answer',
      num_samples: 6,
    });
    await waitForEval(engine.http, launched.body.run_id);
    const compared = await engine.http.post('/evals/compare/', {
      suite: suite.id,
      workflow_id: workflowId,
      versions: [1, 2],
      output_variable: 'out-answer',
      num_samples: 6,
    });
    await waitForComparison(engine.http, compared.body.id);
    await page.goto(`${origin}/console/evals`);
    await page.locator(`tr[data-eval-run="${launched.body.run_id}"] td.score data`).waitFor();
    await shot(page, 'console-evals');
    await page.goto(`${origin}/console/evals/compare/${compared.body.id}`);
    await page.locator('table.changed-rows').waitFor();
    await shot(page, 'console-eval-compare');
  });
});
