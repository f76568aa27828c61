import assert from 'node:assert/strict';
import { type Engine, startEngine } from '../support/engine';
import { createSuite, createWorkflow, echoDefinition, uploadRows } from '../support/evals';
import { l, n } from '../support/graphs';

describe('e2e: eval requests a client gets wrong are answered 4xx, naming what is wrong', function () {
  this.timeout(120_000);
  let engine: Engine;
  let http: Engine['http'];
  let dataset: string;
  let workflowId: string;
  before(async () => {
    engine = await startEngine();
    http = engine.http;
    dataset = await uploadRows(http, 'qa', [{ reply: 'a', answer: 'a' }]);
    workflowId = await createWorkflow(http, 'echo', echoDefinition());
    await createSuite(http, { name: 'qa', dataset_id: dataset, answer_column: 'answer', scorer: { type: 'exact' } });
  });
  after(async () => engine?.close());

  const launch = (body: Record<string, unknown>) =>
    http.post('/evals/launch/', { workflow_id: workflowId, eval_name: 'qa', output_variable: 'out-answer', ...body });

  it('a suite whose dataset lacks the answer column or an input column: 422 naming the column', async () => {
    const noAnswer = await http.post('/evals/suites/', {
      name: 'no answer',
      dataset_id: dataset,
      answer_column: 'solution',
      scorer: { type: 'exact' },
    });
    assert.equal(noAnswer.status, 422);
    assert.deepEqual(noAnswer.body.detail[0].loc, ['body', 'answer_column']);
    assert.match(noAnswer.body.detail[0].msg, /no column 'solution' \(its columns: reply, answer\)/);
    const noInput = await http.post('/evals/suites/', {
      name: 'no input',
      dataset_id: dataset,
      answer_column: 'answer',
      input_columns: ['question'],
      scorer: { type: 'exact' },
    });
    assert.equal(noInput.status, 422);
    assert.match(noInput.body.detail[0].msg, /no column 'question'/);
  });

  it('an unknown dataset or suite: 404 naming it; a second suite of one name: 409', async () => {
    const unknownDataset = await http.post('/evals/suites/', {
      name: 'x',
      dataset_id: 'DS999',
      answer_column: 'answer',
      scorer: { type: 'exact' },
    });
    assert.equal(unknownDataset.status, 404);
    assert.match(unknownDataset.body.detail, /Dataset 'DS999' not found/);
    const unknownSuite = await launch({ eval_name: 'gsm8k' });
    assert.equal(unknownSuite.status, 404);
    assert.match(unknownSuite.body.detail, /Eval suite 'gsm8k' not found/);
    assert.equal((await http.get('/evals/suites/nope/')).status, 404);
    assert.equal((await http.delete('/evals/suites/nope/')).status, 404);
    assert.equal((await http.get('/evals/runs/ER999')).status, 404);
    assert.equal((await http.post('/evals/runs/ER999/cancel/')).status, 404);
    assert.equal((await http.get('/evals/compare/EC999/')).status, 404);
    const twice = await http.post('/evals/suites/', {
      name: 'qa',
      dataset_id: dataset,
      answer_column: 'answer',
      scorer: { type: 'exact' },
    });
    assert.equal(twice.status, 409);
  });

  it('scorers that cannot work are refused when the suite is made (422)', async () => {
    const bad = [
      { type: 'regex', pattern: '(unclosed' },
      { type: 'json_schema', schema: { type: 'no-such-type' } },
      { type: 'llm_judge', model: 'nobody/none' },
      { type: 'numeric', tolerance: -1 },
      { type: 'choice', letters: 'a' },
      { type: 'telepathy' },
    ];
    for (const scorer of bad) {
      const res = await http.post('/evals/suites/', {
        name: `bad ${scorer.type}`,
        dataset_id: dataset,
        answer_column: 'answer',
        scorer,
      });
      assert.equal(res.status, 422, `${JSON.stringify(scorer)} → ${res.status} ${res.text}`);
    }
  });

  it('an unknown output variable: 422 naming it and the valid ones; an unknown workflow: 404', async () => {
    const res = await launch({ output_variable: 'out-nope' });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.detail[0].loc, ['body', 'output_variable']);
    assert.match(res.body.detail[0].msg, /no output variable 'out-nope' \(its output variables: out-answer\)/);
    assert.equal((await launch({ workflow_id: 'S999' })).status, 404);
    assert.equal((await http.get('/evals/runs/')).body.length, 0, 'no eval run was recorded');
  });

  it('a workflow whose input is not in the dataset, or would be fed the answer: 422', async () => {
    const asks = await createWorkflow(http, 'asks question', echoDefinition('question', ['question']));
    const missing = await launch({ workflow_id: asks });
    assert.equal(missing.status, 422);
    assert.match(missing.body.detail[0].msg, /input field 'question' is not a column/);
    const peeks = await createWorkflow(http, 'peeks', echoDefinition('answer', ['reply', 'answer']));
    const fed = await launch({ workflow_id: peeks });
    assert.equal(fed.status, 422);
    assert.match(fed.body.detail[0].msg, /would be fed the expected answer/);
  });

  it('a comparison of a version the workflow does not have: 404 naming it; of one version with itself: 422', async () => {
    const body = { suite: 'qa', workflow_id: workflowId, output_variable: 'out-answer' };
    // A run pins version 1; there is no version 7.
    assert.equal((await http.post(`/wf/${workflowId}/run/`, { initial_inputs: { in: { reply: 'r' } } })).status, 200);
    const unknown = await http.post('/evals/compare/', { ...body, versions: [1, 7] });
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.detail, new RegExp(`Workflow ${workflowId} has no version 7`));
    assert.equal((await http.post('/evals/compare/', { ...body, versions: [2, 2] })).status, 422);
  });

  it('a comparison without output_variable of versions with several output variables: 422 naming the field and the choices', async () => {
    // Two versions of one workflow whose OutputNode has two fields (they differ in its title only).
    const twoFields = (title: string) => ({
      nodes: [
        n('in', 'InputNode', { output_schema: { reply: 'string' } }),
        n(
          'out',
          'OutputNode',
          {
            output_schema: { answer: 'string', reason: 'string' },
            output_map: { answer: 'in.reply', reason: 'in.reply' },
          },
          { title },
        ),
      ],
      links: [l('in', 'out')],
    });
    const wf = await createWorkflow(http, 'two outputs', twoFields('v1'));
    const inputs = { initial_inputs: { in: { reply: 'r' } } };
    assert.equal((await http.post(`/wf/${wf}/run/`, inputs)).status, 200);
    assert.equal((await http.put(`/wf/${wf}/`, { name: 'two outputs', definition: twoFields('v2') })).status, 200);
    assert.equal((await http.post(`/wf/${wf}/run/`, inputs)).status, 200);
    const res = await http.post('/evals/compare/', { suite: 'qa', workflow_id: wf, versions: [1, 2] });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.deepEqual(res.body.detail[0].loc, ['body', 'output_variable']);
    assert.match(res.body.detail[0].msg, /several output variables \(out-answer, out-reason\)/);
  });

  it('a suite is deleted; its card leaves the PySpur list', async () => {
    const made = await createSuite(http, {
      name: 'short-lived',
      dataset_id: dataset,
      answer_column: 'answer',
      scorer: { type: 'exact' },
    });
    assert.ok((await http.get('/evals/')).body.some((c: any) => c.name === 'short-lived'));
    assert.equal((await http.delete(`/evals/suites/${made.id}/`)).status, 204);
    assert.equal((await http.get(`/evals/suites/${made.id}/`)).status, 404);
    assert.ok(!(await http.get('/evals/')).body.some((c: any) => c.name === 'short-lived'));
  });
});
