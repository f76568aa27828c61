// The console's Evals screen (/console/evals) in headless Chromium, signed in with a password: the
// suites and eval runs the test made through the API with their scores, a suite's details, an eval
// run's rows, a comparison's delta and changed rows, launching an eval and a comparison from the
// console, an API error as the API words it, cancelling, what a viewer is offered, and rows holding
// markup shown as text. Every row is scored by an exact-match scorer on a workflow that answers
// with a cell of the row: no model, so the test's own data says what each row scores.
import assert from 'node:assert/strict';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Comparison, EvalRun, Suite } from '../../console/src/pages/evals/eval-types';
import { hashApiKey } from '../../src/http/api-keys';
import type { CompareResponse, EvalRunResponse, SuiteResponse } from '../../src/modules/evals/evals.schemas';
import { bearer, makeUser } from '../support/access';
import { seriousAccessibilityProblems, signIn } from '../support/console';
import { createSuite, createWorkflow, uploadRows, waitForComparison, waitForEval } from '../support/evals';
import { l, n } from '../support/graphs';
import { client } from '../support/http';
import { assertNoProblems, startUiStack, type UiStack } from '../support/ui';

/**
 * The console declares the eval shapes it reads (console/src/pages/evals/eval-types.ts) instead of
 * importing the server's schema module; the compiler holds here that every answer of the API fits them.
 */
type Fits<ConsoleShape, ApiShape extends ConsoleShape> = [ConsoleShape, ApiShape];
export type ConsoleReadsWhatTheApiAnswers = [
  Fits<Suite, SuiteResponse>,
  Fits<EvalRun, EvalRunResponse>,
  Fits<Comparison, CompareResponse>,
];

const ADMIN_KEY = 'spur_console-evals-admin-key-0123456789';
const BUILDER = { username: 'bea-builder', password: 'a builder password' };
const VIEWER = { username: 'vic-viewer', password: 'a viewer password' };

/** Markup a row may hold: were it parsed as HTML, its image would fail to load and set the flag. */
const INJECTED_FLAG = '__evalsInjected';
const HOSTILE_INPUT = `<img src=x onerror="window.${INJECTED_FLAG}=1">`;
const HOSTILE_ANSWER = `<img src=y onerror="window.${INJECTED_FLAG}=2">`;

/**
 * Version 1 of the workflow answers with `reply`, version 2 with `alt`; the exact scorer compares
 * that with `answer`. Version 1 is right on rows 1, 2, 5, 8 (4 of 8); version 2 on 1, 2, 3, 4, 8 (5 of 8).
 */
const ROWS = [
  { question: HOSTILE_INPUT, reply: 'a', alt: 'a', answer: 'a' },
  { question: 'q2', reply: 'b', alt: 'b', answer: 'b' },
  { question: 'q3', reply: 'x', alt: 'c', answer: 'c' }, // better: right with version 2 only
  { question: 'q4', reply: 'x', alt: 'd', answer: 'd' }, // better
  { question: 'q5', reply: 'e', alt: 'y', answer: 'e' }, // worse: right with version 1 only
  { question: 'q6', reply: 'x', alt: HOSTILE_ANSWER, answer: 'f' }, // another wrong answer
  { question: 'q7', reply: 'x', alt: 'x', answer: 'g' }, // the same wrong answer: unchanged
  { question: 'q8', reply: 'h', alt: 'h', answer: 'h' },
];
/** The rows version 2 changes, and how: what the comparison's page must list, and nothing else. */
const CHANGED = [
  ['3', 'better'],
  ['4', 'better'],
  ['5', 'worse'],
  ['6', 'answer'],
];
const VERSION_1_PASSES = ROWS.map((row) => row.reply === row.answer);

/** in → notify (a POST the eval's dry run records instead of sending) → out(answer = in.<from>). */
const answering = (from: 'reply' | 'alt') => ({
  nodes: [
    n('in', 'InputNode', { output_schema: { question: 'string', reply: 'string', alt: 'string' } }),
    n('notify', 'HTTPRequestNode', {
      method: 'POST',
      url: 'http://127.0.0.1:9/notify',
      body: 'asked: {{ in.question }}',
      max_retries: 0,
    }),
    n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: `in.${from}` } }),
  ],
  links: [l('in', 'notify'), l('notify', 'out'), l('in', 'out')],
});

/** A local API whose every `GET /hold/<key>` waits until the test releases them: what keeps an eval running. */
async function startHolder() {
  const waiting: ServerResponse[] = [];
  let released = false;
  const answer = (res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"alt":"held"}');
  const server: Server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    if (released) answer(res);
    else waiting.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    waiting: () => waiting.length,
    release() {
      released = true;
      for (const res of waiting.splice(0)) answer(res);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('browser: the console’s Evals screen', function () {
  this.timeout(300_000);
  let stack: UiStack;
  let admin: ReturnType<typeof client>;
  let holder: Awaited<ReturnType<typeof startHolder>>;
  let suite: Record<string, any>;
  let workflowId: string;
  let first: Record<string, any>;
  let second: Record<string, any>;
  let comparison: Record<string, any>;

  const launch = async (body: Record<string, unknown>) => {
    const res = await admin.post('/evals/launch/', { output_variable: 'out-answer', ...body });
    assert.equal(res.status, 200, res.text);
    return res.body as Record<string, any>;
  };
  const examplesOf = (run: Record<string, any>) =>
    run.results.subset_metrics.default.per_example_results as Array<Record<string, any>>;

  before(async () => {
    holder = await startHolder();
    stack = await startUiStack({ SPUR_API_KEY_HASHES: hashApiKey(ADMIN_KEY), SPUR_OUTBOUND_ALLOW_PRIVATE: 'true' });
    admin = client(stack.engine.api.baseUrl, bearer(ADMIN_KEY));
    await makeUser(admin, { ...BUILDER, role: 'builder' });
    await makeUser(admin, { ...VIEWER, role: 'viewer' });
    const dataset = await uploadRows(admin, 'console letters', ROWS);
    suite = await createSuite(admin, {
      name: 'Console letters',
      description: 'Eight letters, scored exactly',
      type: 'Regression',
      dataset_id: dataset,
      answer_column: 'answer',
      input_columns: ['question'],
      scorer: { type: 'exact' },
    });
    workflowId = await createWorkflow(admin, 'console letters', answering('reply'));
    // Each launch pins the workflow's definition as it is: version 1 answers with reply, version 2 with alt.
    first = await waitForEval(
      admin,
      (await launch({ workflow_id: workflowId, eval_name: suite.name, num_samples: 8 })).run_id,
    );
    const put = await admin.put(`/wf/${workflowId}/`, { name: 'console letters', definition: answering('alt') });
    assert.equal(put.status, 200, put.text);
    second = await waitForEval(
      admin,
      (await launch({ workflow_id: workflowId, eval_name: suite.id, num_samples: 8 })).run_id,
    );
    assert.deepEqual(
      [first.status, first.workflow_version, second.status, second.workflow_version],
      ['COMPLETED', 1, 'COMPLETED', 2],
    );
    const started = await admin.post('/evals/compare/', {
      suite: suite.id,
      workflow_id: workflowId,
      versions: [1, 2],
      output_variable: 'out-answer',
      num_samples: 8,
    });
    assert.equal(started.status, 202, started.text);
    comparison = await waitForComparison(admin, started.body.id);
    assert.equal(comparison.status, 'COMPLETED', JSON.stringify(comparison));
  });
  after(async () => {
    await stack?.close();
    await holder?.close();
  });
  afterEach(() => assertNoProblems(stack.browser));

  it('lists the suite and the eval runs the test made, each with its version, status and the score the API reports', async () => {
    const { page } = stack;
    await signIn(stack, BUILDER, '/console/evals');
    const suiteRow = page.locator(`tr[data-suite="${suite.id}"]`);
    await suiteRow.waitFor();
    assert.deepEqual((await suiteRow.locator('td').allInnerTexts()).slice(0, 5), [
      'Console letters',
      'Regression',
      '8',
      'exact',
      'answer',
    ]);
    for (const run of [first, second]) {
      const row = page.locator(`tr[data-eval-run="${run.run_id}"]`);
      const score = row.locator('td.score data');
      await score.waitFor();
      const { accuracy, correct_predictions, total_samples } = run.results;
      assert.equal(await score.getAttribute('value'), String(accuracy));
      assert.match(await score.innerText(), new RegExp(`^${correct_predictions} of ${total_samples} right`));
      const cells = await row.locator('td').allInnerTexts();
      assert.deepEqual(cells.slice(0, 5), [
        run.run_id,
        'Console letters',
        workflowId,
        String(run.workflow_version),
        'COMPLETED',
      ]);
    }
    // The API's scores are the data's: version 1 is right on 4 of the 8 rows.
    assert.equal(first.results.correct_predictions, VERSION_1_PASSES.filter(Boolean).length);
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);
  });

  it("a suite's page shows what it is made of and its eval runs", async () => {
    const { page } = stack;
    await page.locator(`tr[data-suite="${suite.id}"]`).getByRole('link', { name: 'Console letters' }).click();
    await page.getByRole('heading', { name: 'Suite Console letters' }).waitFor();
    const facts = await page.locator('dl.facts').innerText();
    for (const fact of [
      suite.id,
      suite.dataset_id,
      'Answer column\nanswer',
      'Input columns shown\nquestion',
      'Scorer\nexact',
    ])
      assert.ok(facts.includes(fact), `${fact} in ${facts}`);
    await page.locator(`tr[data-eval-run="${first.run_id}"]`).waitFor();
    await page.locator(`tr[data-eval-run="${second.run_id}"]`).waitFor();
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);
  });

  it("an eval run's page shows each row passing or failing as the API scored it, and the request it would have sent", async () => {
    const { page, origin } = stack;
    await page.goto(`${origin}/console/evals/runs/${first.run_id}`);
    await page.getByRole('heading', { name: `Eval run ${first.run_id} COMPLETED` }).waitFor();
    const examples = examplesOf(first);
    assert.deepEqual(
      examples.map((e) => e.is_correct),
      VERSION_1_PASSES,
      "the API scored the rows as the test's data says",
    );
    for (const e of examples) {
      const row = page.locator(`table.examples tr[data-example="${e.example_id}"]`);
      assert.equal(await row.locator('td.result').innerText(), e.is_correct ? 'pass' : 'fail', `row ${e.example_id}`);
      assert.equal(await row.locator('td').nth(3).innerText(), e.predicted_answer);
    }
    assert.equal(await page.locator('table.examples tbody tr').count(), ROWS.length);
    assert.equal(await page.locator('dd.score data').getAttribute('value'), String(first.results.accuracy));
    const request = page.locator('table.would-be tr[data-example="2"][data-node="notify"]');
    assert.match(await request.innerText(), /POST http:\/\/127\.0\.0\.1:9\/notify/);
    await request.getByText('Headers and body').click();
    assert.match(await request.innerText(), /asked: q2/);
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);
  });

  it('a comparison’s page shows the delta and interval the API reports and exactly the rows version 2 changed', async () => {
    const { page, origin } = stack;
    await page.goto(`${origin}/console/evals/compare/${comparison.id}`);
    await page.getByRole('heading', { name: `Comparison ${comparison.id} COMPLETED` }).waitFor();
    assert.equal(await page.locator('dd.delta-value data').getAttribute('value'), String(comparison.delta));
    const interval = page.locator('dd.interval data');
    assert.deepEqual(
      [await interval.nth(0).getAttribute('value'), await interval.nth(1).getAttribute('value')],
      [String(comparison.ci_low), String(comparison.ci_high)],
    );
    for (const [side, accuracy] of [
      ['A', comparison.accuracy_a],
      ['B', comparison.accuracy_b],
    ])
      assert.equal(await page.locator(`tr[data-side="${side}"] data`).getAttribute('value'), String(accuracy));
    // 5 of 8 right against 4 of 8: what the data says the API must answer.
    assert.equal(comparison.delta, 0.125);

    const changed = page.locator('table.changed-rows tbody tr');
    await changed.first().waitFor();
    const marked = await changed.evaluateAll((rows) =>
      rows.map((row) => [row.getAttribute('data-example'), row.getAttribute('data-change')]),
    );
    assert.deepEqual(marked, CHANGED);
    assert.match(await changed.nth(0).locator('td.change').innerText(), /better/);
    assert.match(await changed.nth(2).locator('td.change').innerText(), /worse/);
    assert.deepEqual(await seriousAccessibilityProblems(stack), []);
  });

  it('rows holding markup are shown as text: no element is made of them and their script never runs', async () => {
    const { page, origin } = stack;
    const injected = () => page.evaluate((flag) => (globalThis as Record<string, unknown>)[flag], INJECTED_FLAG);

    await page.goto(`${origin}/console/evals/runs/${first.run_id}`);
    const row = page.locator('table.examples tr[data-example="1"]');
    await row.waitFor();
    assert.equal(await row.locator('td').nth(1).innerText(), HOSTILE_INPUT);
    const request = page.locator('table.would-be tr[data-example="1"]');
    await request.getByText('Headers and body').click();
    assert.ok((await request.innerText()).includes(`asked: ${HOSTILE_INPUT}`));
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await injected(), undefined);

    await page.goto(`${origin}/console/evals/compare/${comparison.id}`);
    const changed = page.locator('table.changed-rows tr[data-example="6"]');
    await changed.waitFor();
    assert.ok((await changed.locator('td').nth(4).innerText()).includes(HOSTILE_ANSWER));
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await injected(), undefined);
  });

  it('launching an eval from the console opens the new run, which the API then reports; so does starting a comparison', async () => {
    const { page, origin } = stack;
    await page.goto(`${origin}/console/evals`);
    const form = page.getByRole('form', { name: 'Launch an eval' });
    await form.getByLabel('Suite').selectOption(suite.id);
    await form.getByLabel('Workflow').selectOption(workflowId);
    await form.getByRole('option', { name: 'out-answer', includeHidden: true }).waitFor({ state: 'attached' });
    await form.getByLabel('Output variable').selectOption('out-answer');
    await form.getByLabel('Rows', { exact: true }).fill('3');
    await form.getByRole('button', { name: 'Launch eval' }).click();
    await page.waitForURL(/\/console\/evals\/runs\/ER\d+$/);
    const launchedId = page.url().split('/').at(-1) as string;
    assert.ok(![first.run_id, second.run_id].includes(launchedId), 'a new eval run');
    const launched = await waitForEval(admin, launchedId);
    assert.deepEqual(
      [launched.status, launched.suite_id, launched.workflow_id, launched.workflow_version, launched.num_samples],
      ['COMPLETED', suite.id, workflowId, 2, 3],
    );
    // The page reads the run again while it runs: it shows the end the API reports.
    await page.getByRole('heading', { name: `Eval run ${launchedId} COMPLETED` }).waitFor({ timeout: 60_000 });
    await page.locator('dd.score data').waitFor();
    assert.equal(await page.locator('dd.score data').getAttribute('value'), String(launched.results.accuracy));

    await page.goto(`${origin}/console/evals`);
    const compare = page.getByRole('form', { name: 'Compare two versions' });
    await compare.getByLabel('Suite').selectOption(suite.id);
    await compare.getByLabel('Workflow').selectOption(workflowId);
    await compare
      .getByLabel('Version A')
      .getByRole('option', { name: 'version 1', includeHidden: true })
      .waitFor({ state: 'attached' });
    await compare.getByLabel('Version A').selectOption('1');
    await compare.getByLabel('Version B').selectOption('2');
    await compare.getByLabel('Rows', { exact: true }).fill('2');
    await compare.getByRole('button', { name: 'Start comparison' }).click();
    await page.waitForURL(/\/console\/evals\/compare\/EC\d+$/);
    const comparedId = page.url().split('/').at(-1) as string;
    assert.notEqual(comparedId, comparison.id);
    const compared = await waitForComparison(admin, comparedId);
    assert.deepEqual([compared.status, compared.versions, compared.paired_samples], ['COMPLETED', [1, 2], 2]);
    await page.getByRole('heading', { name: `Comparison ${comparedId} COMPLETED` }).waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('dd.delta-value data').getAttribute('value'), String(compared.delta));
  });

  it("a launch the API refuses shows the API's own message (a suite deleted since the page listed it)", async () => {
    const { page, origin } = stack;
    const doomed = await createSuite(admin, {
      name: 'Console doomed',
      dataset_id: suite.dataset_id,
      answer_column: 'answer',
      input_columns: ['question'],
      scorer: { type: 'exact' },
    });
    await page.goto(`${origin}/console/evals`);
    const form = page.getByRole('form', { name: 'Launch an eval' });
    await form.getByRole('option', { name: /^Console doomed/, includeHidden: true }).waitFor({ state: 'attached' });
    assert.equal((await admin.delete(`/evals/suites/${doomed.id}/`)).status, 204);
    await form.getByLabel('Suite').selectOption(doomed.id);
    await form.getByLabel('Workflow').selectOption(workflowId);
    await form.getByRole('option', { name: 'out-answer', includeHidden: true }).waitFor({ state: 'attached' });
    await form.getByLabel('Output variable').selectOption('out-answer');
    await form.getByRole('button', { name: 'Launch eval' }).click();
    const refused = await admin.post('/evals/launch/', {
      eval_name: doomed.id,
      workflow_id: workflowId,
      output_variable: 'out-answer',
      num_samples: 10,
    });
    assert.equal(refused.status, 404, refused.text);
    assert.equal(await form.getByRole('alert').innerText(), refused.body.detail);
    assert.ok(page.url().endsWith('/console/evals'), 'the page stays where it was');
    // The refusal is the point of this test, not a problem of the page.
    const expected = stack.browser.problems.indexOf('POST /api/evals/launch/ → 404');
    assert.notEqual(expected, -1, stack.browser.problems.join('\n'));
    stack.browser.problems.splice(expected, 1);
  });

  describe('an eval run still running', () => {
    let held: string;
    before(async () => {
      const definition = {
        nodes: [
          n('in', 'InputNode', { output_schema: { question: 'string', reply: 'string', alt: 'string' } }),
          n('gate', 'HTTPRequestNode', {
            url: `${holder.url}/hold/{{ in.reply }}`,
            timeout_seconds: 300,
            max_retries: 0,
          }),
          n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'gate.json.alt' } }),
        ],
        links: [l('in', 'gate'), l('gate', 'out')],
      };
      const heldWorkflow = await createWorkflow(admin, 'console held', definition);
      held = (await launch({ workflow_id: heldWorkflow, eval_name: suite.id, num_samples: 1, concurrency: 1 })).run_id;
      await waitForEval(admin, held, (r) => r.status === 'RUNNING' && holder.waiting() > 0, 60_000);
    });

    it('a viewer sees the suites, the eval runs and a comparison, and is offered no launch, compare or cancel', async () => {
      const { page, origin } = stack;
      await signIn(stack, VIEWER, '/console/evals');
      // Once the header names the viewer, the page knows the role: what is missing now stays missing.
      await page
        .locator('header .who')
        .getByText(/vic-viewer · viewer/)
        .waitFor();
      await page.locator(`tr[data-suite="${suite.id}"]`).waitFor();
      await page.locator(`tr[data-eval-run="${held}"]`).waitFor();
      await page.locator(`tr[data-eval-run="${first.run_id}"] td.score data`).waitFor();
      assert.equal(await page.getByRole('form').count(), 0);
      assert.equal(await page.getByRole('button', { name: /Launch eval|Start comparison/ }).count(), 0);
      assert.deepEqual(await seriousAccessibilityProblems(stack), []);

      await page.goto(`${origin}/console/evals/runs/${held}`);
      await page.getByRole('heading', { name: `Eval run ${held} RUNNING` }).waitFor();
      await page.locator('header .who').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Cancel eval run' }).count(), 0);
      assert.deepEqual(await seriousAccessibilityProblems(stack), []);

      await page.goto(`${origin}/console/evals/compare/${comparison.id}`);
      await page.locator('table.changed-rows tbody tr').first().waitFor();
      assert.equal(await page.getByRole('button').count(), 0);
    });

    it('a builder cancels it from its page: the API then reports it CANCELED, and the page shows it', async () => {
      const { page } = stack;
      await signIn(stack, BUILDER, `/console/evals/runs/${held}`);
      await page.getByRole('heading', { name: `Eval run ${held} RUNNING` }).waitFor();
      await page.getByRole('button', { name: 'Cancel eval run' }).click();
      await page
        .getByRole('status')
        .getByText(/Cancelling/)
        .waitFor();
      // The row's read may not notice the cancel until it is answered: answer it now.
      holder.release();
      const ended = await waitForEval(admin, held);
      assert.equal(ended.status, 'CANCELED', JSON.stringify(ended));
      await page.getByRole('heading', { name: `Eval run ${held} CANCELED` }).waitFor({ timeout: 60_000 });
      assert.equal(await page.getByRole('button', { name: 'Cancel eval run' }).count(), 0);
    });
  });
});
