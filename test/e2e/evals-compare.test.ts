import assert from 'node:assert/strict';
import { type Engine, startEngine } from '../support/engine';
import { createSuite, createWorkflow, echoDefinition, uploadRows } from '../support/evals';
import { pollDelays } from '../support/poll';
import { pairedDelta } from '../../src/evals/paired-interval';

/**
 * Six rows: version 1 answers with `reply`, version 2 with `alt`. Version 1 is right on rows 1–2,
 * version 2 on rows 1–5: 2 right in both, 3 right with version 2 only, 1 wrong in both.
 */
const ROWS = [
  { reply: 'a', alt: 'a', answer: 'a' },
  { reply: 'b', alt: 'b', answer: 'b' },
  { reply: 'x', alt: 'c', answer: 'c' },
  { reply: 'x', alt: 'd', answer: 'd' },
  { reply: 'x', alt: 'e', answer: 'e' },
  { reply: 'x', alt: 'y', answer: 'f' },
];

describe('e2e: comparing two versions of a workflow on the same rows', function () {
  this.timeout(240_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(async () => engine?.close());

  it('answers the accuracy delta with its 95 % interval and the examples that differ', async () => {
    const { http } = engine;
    const dataset = await uploadRows(http, 'compare rows', ROWS);
    const suite = await createSuite(http, {
      name: 'letters',
      dataset_id: dataset,
      answer_column: 'answer',
      input_columns: ['reply', 'alt'],
      scorer: { type: 'exact' },
    });
    const fields = ['reply', 'alt'];
    const workflowId = await createWorkflow(http, 'letters', echoDefinition('reply', fields));
    // Each run pins the definition it ran as a version: version 1 answers with reply, version 2 with alt.
    const inputs = { initial_inputs: { in: { reply: 'r', alt: 'a' } } };
    assert.equal((await http.post(`/wf/${workflowId}/run/`, inputs)).status, 200);
    const put = await http.put(`/wf/${workflowId}/`, { name: 'letters', definition: echoDefinition('alt', fields) });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal((await http.post(`/wf/${workflowId}/run/`, inputs)).status, 200);
    const versions = (await http.get(`/wf/${workflowId}/versions/`)).body.map((v: any) => v.version);
    assert.deepEqual(versions, [2, 1]);

    const started = await http.post('/evals/compare/', {
      suite: suite.name,
      workflow_id: workflowId,
      versions: [1, 2],
      output_variable: 'out-answer',
      num_samples: 6,
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.match(started.body.id, /^EC\d+$/);

    let body: any;
    const pause = pollDelays();
    const deadline = Date.now() + 180_000;
    for (;;) {
      body = (await http.get(`/evals/compare/${started.body.id}/`)).body;
      if (['COMPLETED', 'FAILED', 'CANCELED'].includes(body.status) || Date.now() > deadline) break;
      await pause();
    }
    assert.equal(body.status, 'COMPLETED', JSON.stringify(body));
    assert.deepEqual(
      body.runs.map((r: any) => r.workflow_version),
      [1, 2],
    );
    assert.equal(body.paired_samples, 6);
    assert.deepEqual(body.counts, { both: 2, only_a: 0, only_b: 3, neither: 1 });
    assert.equal(body.accuracy_a, 2 / 6);
    assert.equal(body.accuracy_b, 5 / 6);
    assert.equal(body.delta, 0.5);
    // Newcombe's paired interval of these counts (the unit test checks the formula itself).
    const expected = pairedDelta({ both: 2, onlyA: 0, onlyB: 3, neither: 1 });
    assert.deepEqual([body.ci_low, body.ci_high], [expected.ci_low, expected.ci_high]);
    assert.ok(body.ci_low < 0 && body.ci_high > 0.5, 'six rows cannot tell the versions apart beyond chance');
    assert.match(body.method, /Newcombe/);
    assert.deepEqual(
      body.differences.map((d: any) => [
        d.example_id,
        d.a.predicted_answer,
        d.b.predicted_answer,
        d.ground_truth_answer,
      ]),
      [
        [3, 'x', 'c', 'c'],
        [4, 'x', 'd', 'd'],
        [5, 'x', 'e', 'e'],
      ],
    );
    const again = (await http.get(`/evals/compare/${started.body.id}/`)).body;
    assert.deepEqual(
      [again.ci_low, again.ci_high],
      [body.ci_low, body.ci_high],
      'the same results give the same interval',
    );
  });
});
