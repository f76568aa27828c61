import assert from 'node:assert/strict';
import { type Engine, startEngine, waitForRun } from '../support/engine';
import { l, n } from '../support/graphs';
import { eventually } from '../support/python-runs';
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

  it('answers delta null, not 0, until the comparison has ended, with examples already paired', async () => {
    const { http } = engine;
    const { suite, workflowId } = await twoVersions(http, 'letters, B waits for a person');
    // Version 3 answers with alt, as version 2 does, once a person lets each row through.
    const gatedAlt = {
      nodes: [
        n('in', 'InputNode', { output_schema: { reply: 'string', alt: 'string' } }),
        n('gate', 'HumanInterventionNode', { message: 'Let this row through?' }),
        n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'gate.in.alt' } }),
      ],
      links: [l('in', 'gate'), l('gate', 'out')],
    };
    const put = await http.put(`/wf/${workflowId}/`, { name: suite.name, definition: gatedAlt });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const pinned = await http.post(`/wf/${workflowId}/start_run/`, {
      initial_inputs: { in: { reply: 'r', alt: 'a' } },
    });
    assert.equal(pinned.status, 200, JSON.stringify(pinned.body));
    await waitForRun(http, pinned.body.id, (r) => r.status === 'PAUSED');

    const started = await http.post('/evals/compare/', {
      suite: suite.id,
      workflow_id: workflowId,
      versions: [1, 3],
      output_variable: 'out-answer',
      num_samples: 6,
      concurrency: 6,
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.delta, null, `started ${started.body.status}: ${JSON.stringify(started.body)}`);
    const batchB = await eventually('run B started', async () => {
      const b = (await http.get(`/evals/compare/${started.body.id}/`)).body;
      return b.runs[1].batch_run_id ?? undefined;
    });
    /** Lets row `row` of B through once it waits. */
    const letThrough = async (row: number) => {
      const rowRun = `${batchB}-${row}`;
      await waitForRun(http, rowRun, (r) => r.status === 'PAUSED', 60_000);
      const decided = await http.post(`/wf/process_pause_action/${rowRun}/`, {
        action: 'APPROVE',
        user_id: 'reviewer',
        inputs: {},
      });
      assert.equal(decided.status, 200, JSON.stringify(decided.body));
    };
    // Rows 1–5 of B decided: five examples paired, the sixth still waiting for its person.
    for (let row = 1; row <= 5; row++) await letThrough(row);
    const midway = await eventually('five examples paired', async () => {
      const b = (await http.get(`/evals/compare/${started.body.id}/`)).body;
      return b.paired_samples === 5 ? b : undefined;
    });
    assert.equal(midway.status, 'RUNNING', JSON.stringify(midway));
    assert.equal(midway.delta, null, 'no delta while a run is still going');
    assert.deepEqual(midway.counts, { both: 2, only_a: 0, only_b: 3, neither: 0 });

    await letThrough(6);
    const ended = await waitForComparison(http, started.body.id);
    assert.equal(ended.status, 'COMPLETED', JSON.stringify(ended));
    assert.equal(ended.delta, 0.5);
  });
});
