import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { type SplitEngine, waitForRun } from '../support/engine';
import { pythonExclaim } from '../support/graphs';
import {
  addNode,
  assertNoProblems,
  connect,
  createSpur,
  openDashboard,
  placed,
  runFromEditor,
  startSplitUiStack,
  type UiStack,
} from '../support/ui';
import { startWorker } from '../support/worker';

/** Settles once the page has read a run's status (the editor polls a run it started once a second). */
function statusRead(page: Page): Promise<unknown> {
  return page.waitForResponse((res) => /\/api\/run\/[^/]+\/status\/$/.test(new URL(res.url()).pathname), {
    timeout: 30_000,
  });
}

describe('browser: the dashboard and the editor', function () {
  this.timeout(240_000);
  let stack: UiStack<SplitEngine>;
  before(async () => {
    stack = await startSplitUiStack();
  });
  after(async () => stack?.close());
  afterEach(() => assertNoProblems(stack.browser));

  it("loads the dashboard with Spur's templates and no failed API call", async () => {
    await openDashboard(stack, true);
    await stack.page.getByText('Expense approval with a human pause').waitFor();
    await stack.page.getByText('Spurs Awaiting Human Approval').waitFor();
    assert.ok(
      stack.browser.blocked.every((url) => !url.startsWith(stack.origin)),
      'only off-machine requests are blocked',
    );
  });

  it('a new spur gets a node added and connected, and keeps it after a reload', async () => {
    const { page } = stack;
    await openDashboard(stack, false);
    const workflowId = await createSpur(page);
    const addedId = await addNode(page, 'Python', 'Python Function', 'PythonFuncNode');
    await connect(page, 'input_node', addedId);

    // The editor saves on its own (PUT /wf/{id}/); wait until the stored definition has both.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const def = (await stack.engine.http.get(`/wf/${workflowId}/`)).body.definition;
      const saved =
        def.nodes.some((n: { id: string }) => n.id === addedId) &&
        def.links.some(
          (l: { source_id: string; target_id: string }) => l.source_id === 'input_node' && l.target_id === addedId,
        );
      if (saved) break;
      assert.ok(Date.now() < deadline, `the editor never saved the node and link: ${JSON.stringify(def)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    await page.reload();
    await page.locator(`.react-flow__node[data-id="${addedId}"]`).waitFor();
    assert.equal(await page.locator('.react-flow__edge').count(), 1);
  });

  it('runs a workflow from the editor; the trace shows its outputs', async () => {
    const { page, engine } = stack;
    const definition = {
      ...pythonExclaim,
      nodes: placed(pythonExclaim.nodes),
      test_inputs: [{ id: 1, x: 'from the browser' }],
    };
    const wf = (await engine.http.post('/wf/', { name: 'Exclaim in the browser', definition })).body;
    await page.goto(`${stack.origin}/workflows/${wf.id}`);
    await page.locator('.react-flow__node[data-id="py"]').waitFor();
    // No worker when the run starts, as on a busy fleet: its record says PENDING until one runs it.
    // The editor's first poll finds it so; it must keep polling until the run ends.
    await engine.worker.stop();
    const firstRead = statusRead(page);
    await runFromEditor(page, 'from the browser');
    await firstRead;
    engine.worker = await startWorker(engine.api.env);
    // The editor polls the run and writes each node's output into its card (its "completed" toast
    // is too brief to wait for).
    await page
      .locator('.react-flow__node[data-id="out"]')
      .getByText('from the browser!')
      .waitFor({ timeout: 90_000 })
      .catch(async (err: unknown) => {
        // Say where it stalled: no run started, a run not ended, or an ended run the card never showed.
        const runs = (await engine.http.get(`/wf/${wf.id}/runs/`)).body as Array<{ id: string; status: string }>;
        throw new Error(`the output card never showed the answer; runs: ${JSON.stringify(runs)}: ${String(err)}`);
      });

    const [started] = (await engine.http.get(`/wf/${wf.id}/runs/`)).body;
    const run = await waitForRun(engine.http, started.id, undefined, 60_000);
    assert.equal(run.status, 'COMPLETED');
    await page.goto(`${stack.origin}/trace/${run.id}`);
    await page.getByText('from the browser!').first().waitFor();
  });

  it('opens the runs, version-history and evals pages without a failed API call', async () => {
    const { page, engine } = stack;
    const [wf] = (await engine.http.get('/wf/?page=1&page_size=100')).body.filter(
      (w: { name: string }) => w.name === 'Exclaim in the browser',
    );
    await page.goto(`${stack.origin}/runs/${wf.id}`);
    await page
      .locator('td', { hasText: /completed/i })
      .first()
      .waitFor();
    await page.goto(`${stack.origin}/version-diff/${wf.id}`);
    await page.waitForResponse((res) => res.url().includes(`/api/wf/${wf.id}/versions/`));
    await page.goto(`${stack.origin}/evals`);
    await page.waitForResponse((res) => res.url().endsWith('/api/evals/runs/'));
  });
});
