import assert from 'node:assert/strict';
import { type Engine, startEngine } from '../support/engine';
import { twoVersions, waitForComparison } from '../support/evals';

describe('e2e: comparing two versions of a workflow on the same rows', function () {
  this.timeout(240_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine();
  });
  after(async () => engine?.close());

  it('answers the accuracy delta with its 95 % interval and the examples that differ', async () => {
    const { http } = engine;
    const { suite, workflowId } = await twoVersions(http, 'letters');

    const started = await http.post('/evals/compare/', {
      suite: suite.name,
      workflow_id: workflowId,
      versions: [1, 2],
      output_variable: 'out-answer',
      num_samples: 6,
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.match(started.body.id, /^EC\d+$/);

    const body = await waitForComparison(http, started.body.id);
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
    // Newcombe's method 10 for these counts, worked out apart from Spur's code (the unit test checks
    // the code against the paper's own examples).
    assert.ok(Math.abs(body.ci_low - -0.0403) < 1e-4, String(body.ci_low));
    assert.ok(Math.abs(body.ci_high - 0.7732) < 1e-4, String(body.ci_high));
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

  it('a body without output_variable scores the one output variable the versions have', async () => {
    const { http } = engine;
    const { suite, workflowId } = await twoVersions(http, 'letters, variable implied');
    const started = await http.post('/evals/compare/', { suite: suite.id, workflow_id: workflowId, versions: [1, 2] });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.deepEqual(
      started.body.runs.map((r: any) => r.output_variable),
      ['out-answer', 'out-answer'],
    );
    const body = await waitForComparison(http, started.body.id);
    assert.equal(body.status, 'COMPLETED', JSON.stringify(body));
    assert.equal(body.delta, 0.5);
  });
});
