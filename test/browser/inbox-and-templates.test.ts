import assert from 'node:assert/strict';
import { waitForRun } from '../support/engine';
import { assertNoProblems, openDashboard, runCleaningTemplate, startUiStack, type UiStack } from '../support/ui';

describe('browser: the human-task inbox and templates', function () {
  this.timeout(240_000);
  let stack: UiStack;
  before(async () => {
    stack = await startUiStack();
    await openDashboard(stack, true);
  });
  after(async () => stack?.close());
  afterEach(() => assertNoProblems(stack.browser));

  it('approves a paused run from the dashboard inbox, and the run completes', async () => {
    const { page, engine } = stack;
    const templates = (await engine.http.get('/templates/')).body as { file_name: string }[];
    const wf = (
      await engine.http.post(
        '/templates/instantiate/',
        templates.find((t) => t.file_name === 'approval-flow.json')!,
      )
    ).body;
    const started = (
      await engine.http.post(`/wf/${wf.id}/start_run/`, {
        initial_inputs: { request: { requester: 'Grace', amount: 900, purpose: 'A new laptop' } },
      })
    ).body;
    await waitForRun(engine.http, started.id, (r) => r.status === 'PAUSED', 60_000);

    await openDashboard(stack, false);
    // One inbox entry per paused run: the workflow's name (Spur sends it; PySpur's UI shows none), the pause message.
    const entry = page
      .locator('div.justify-between', { has: page.locator('h4', { hasText: wf.name }) })
      .filter({ hasText: 'Approve this expense request?' });
    await entry.waitFor();
    await entry.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByText('Workflow approved successfully').waitFor();

    const done = await waitForRun(engine.http, started.id, undefined, 60_000);
    assert.equal(done.status, 'COMPLETED', 'the run goes on after one approval (PySpur pauses again)');
    const run = (await engine.http.get(`/run/${started.id}/`)).body;
    assert.deepEqual(run.outputs.decision, { summary: 'Grace asks for 900.00 for: A new laptop', over_limit: true });
    const [pause] = (await engine.http.get(`/wf/pause_history/${started.id}/`)).body;
    assert.equal(pause.resume_action, 'APPROVE');
  });

  it('instantiates a template from the dashboard and runs it in the editor', async () => {
    const run = await runCleaningTemplate(stack);
    assert.equal(run.status, 'COMPLETED');
    assert.deepEqual(run.outputs.cleaned.rows, [{ name: 'Ada Lovelace', email: 'ada@example.org' }]);
  });
});
