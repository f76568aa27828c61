import assert from 'node:assert/strict';
import { type Engine, startEngine } from '../support/engine';
import { twoVersions, waitForComparison } from '../support/evals';
import { pairedDelta } from '../../src/evals/paired-interval';

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
