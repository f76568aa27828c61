import assert from 'node:assert/strict';
import { createSuite, createWorkflow, echoDefinition, uploadRows, waitForEval } from '../support/evals';
import { assertNoProblems, startUiStack, type UiStack } from '../support/ui';

describe("browser: PySpur's Evals page runs a suite and shows its results", function () {
  this.timeout(240_000);
  let stack: UiStack;
  before(async () => {
    stack = await startUiStack();
  });
  after(async () => stack?.close());
  afterEach(() => assertNoProblems(stack.browser));

  it('lists the suite, launches it on a workflow through its dialog, and shows the accuracy and each example', async () => {
    const { page, engine, origin } = stack;
    const dataset = await uploadRows(engine.http, 'capitals', [
      { question: 'Capital of France?', reply: 'Paris', answer: 'paris' },
      { question: 'Capital of Italy?', reply: 'Rome', answer: 'rome' },
      { question: 'Capital of Spain?', reply: 'Lisbon', answer: 'madrid' },
    ]);
    await createSuite(engine.http, {
      name: 'Capitals',
      description: 'Three capitals, case-insensitive',
      type: 'Knowledge',
      dataset_id: dataset,
      answer_column: 'answer',
      input_columns: ['question'],
      scorer: { type: 'normalized' },
    });
    await createWorkflow(engine.http, 'capital answerer', echoDefinition('reply', ['question', 'reply']));

    await page.goto(`${origin}/evals`);
    // The innermost element holding the suite's title and a Run Eval button: its card.
    const card = page
      .locator('div', { has: page.getByRole('heading', { name: 'Capitals', exact: true }) })
      .filter({ has: page.getByRole('button', { name: 'Run Eval' }) })
      .last();
    await card.getByText('Three capitals, case-insensitive').waitFor();
    await card.getByText('Knowledge').waitFor();
    await card.getByRole('button', { name: 'Run Eval' }).click();

    const dialog = page.getByRole('dialog');
    await dialog.getByText('Eval Configuration').waitFor();
    await dialog.getByRole('button', { name: 'Select a Workflow' }).click();
    await page.getByRole('menuitem', { name: 'capital answerer' }).click();
    await dialog.getByRole('button', { name: 'Select an Output Variable' }).click();
    await page.getByRole('menuitem', { name: 'answer' }).click();
    // A key can go out while the menu that just closed still hands focus back to its button (one
    // press moved nothing in a loaded full run), so press until the slider reads three.
    const samples = dialog.getByRole('slider').first();
    await samples.focus();
    for (let value = await samples.inputValue(); value !== '3'; value = await samples.inputValue()) {
      await samples.press('ArrowRight');
      await page.waitForTimeout(100);
    }
    await dialog.getByRole('button', { name: 'Run Eval' }).click();
    const toast = page.getByText(/Eval run started with ID: ER\d+/);
    await toast.waitFor();
    const runId = /ER\d+/.exec((await toast.textContent()) ?? '')![0];

    const done = await waitForEval(engine.http, runId);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    assert.equal(done.num_samples, 3, 'the dialog asked for three samples');

    // The page polls its runs every 5 s: the run shows with its accuracy once completed.
    const row = page.getByRole('row', { name: new RegExp(runId) });
    await row.getByText('66.7%').waitFor({ timeout: 60_000 });
    await row.getByRole('button', { name: 'View Examples' }).click();
    await page.getByText('Accuracy: 66.7%').waitFor();
    const examples = page.getByRole('row');
    await examples.filter({ hasText: 'Capital of France?' }).getByText('Correct', { exact: true }).waitFor();
    await examples.filter({ hasText: 'Capital of Spain?' }).getByText('Incorrect', { exact: true }).waitFor();
    assert.equal(await examples.filter({ hasText: 'Capital of Spain?' }).getByText('Lisbon').count(), 1);
  });
});
