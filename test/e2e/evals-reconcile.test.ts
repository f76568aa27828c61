// An api killed (kill -9) after recording an eval and before starting its workflow: the reconciler
// starts the eval as the api would have, and it ends with the score an undisturbed run gets.
import assert from 'node:assert/strict';
import { trusted } from 'mongoose';
import { evalWorkflowId, runWorkflowId } from '../../src/contracts/workflow-names';
import { type Engine, closeReconcilingEngine, startEngine } from '../support/engine';
import { twoVersions, verdicts, waitForComparison, waitForEval } from '../support/evals';
import { evalLeftUnstarted } from '../support/half-started-runs';

describe('e2e: the reconciler starts an eval whose api died before starting it', function () {
  this.timeout(300_000);
  let engine: Engine;
  before(async () => {
    engine = await startEngine({ SPUR_RECONCILE_EVERY_SECONDS: '2', SPUR_RECONCILE_GRACE_SECONDS: '3' });
  });
  after(() => closeReconcilingEngine(engine));

  const described = (workflowId: string) =>
    engine.api.temporal.workflow
      .getHandle(workflowId)
      .describe()
      .then(
        (d) => d,
        () => null,
      );
  const prefix = () => engine.api.env.SPUR_WORKFLOW_ID_PREFIX;

  it('a launch recorded, its workflow never started: the eval reaches COMPLETED with its score, its batch run as the eval workflow’s child', async () => {
    const { http } = engine;
    const { suite, workflowId } = await twoVersions(http, 'half-launched');
    const evalRunId = await evalLeftUnstarted(
      engine,
      '/evals/launch/',
      { workflow_id: workflowId, eval_name: suite.name, output_variable: 'out-answer', num_samples: 6 },
      async (since) => {
        const run = await engine.api.models.EvalRun.findOne({
          workflow_id: workflowId,
          start_time: trusted({ $gte: since }),
        }).lean();
        return run ? String(run._id) : null;
      },
    );
    assert.equal((await http.get(`/evals/runs/${evalRunId}`)).body.status, 'PENDING');
    assert.equal(await described(evalWorkflowId(evalRunId, prefix())), null, 'the api died before the start');

    const ended = await waitForEval(http, evalRunId, undefined, 120_000);
    assert.equal(ended.status, 'COMPLETED', JSON.stringify(ended));
    // The workflow's current version (2) echoes `alt`: right on rows 1–5.
    assert.equal(ended.results.accuracy, 5 / 6);
    assert.deepEqual(verdicts(ended), [true, true, true, true, true, false]);
    const batch = await described(runWorkflowId(ended.batch_run_id, prefix()));
    assert.equal(batch?.parentExecution?.workflowId, evalWorkflowId(evalRunId, prefix()), 'scored by its eval');
  });

  it('a comparison recorded, neither workflow started: both runs start and the comparison answers its delta', async () => {
    const { http } = engine;
    const { suite, workflowId } = await twoVersions(http, 'half-compared');
    const comparisonId = await evalLeftUnstarted(
      engine,
      '/evals/compare/',
      { suite: suite.name, workflow_id: workflowId, versions: [1, 2], output_variable: 'out-answer', num_samples: 6 },
      async () => {
        const doc = await engine.api.models.EvalComparison.findOne({ workflow_id: workflowId }).lean();
        return doc && doc.eval_run_ids.length === 2 ? String(doc._id) : null;
      },
    );
    const pending = (await http.get(`/evals/compare/${comparisonId}/`)).body;
    assert.deepEqual(
      pending.runs.map((r: { status: string }) => r.status),
      ['PENDING', 'PENDING'],
    );

    const body = await waitForComparison(http, comparisonId, 180_000);
    assert.equal(body.status, 'COMPLETED', JSON.stringify(body));
    assert.deepEqual(body.counts, { both: 2, only_a: 0, only_b: 3, neither: 1 });
    assert.equal(body.delta, 0.5);
  });
});
