// An eval run is a workflow with the batch as its child: a worker killed mid-run (kill -9) loses
// neither rows nor scores, and the next worker ends it with the score an undisturbed run gets.
import assert from 'node:assert/strict';
import { type SplitEngine, startSplitEngine } from '../support/engine';
import { createSuite, createWorkflow, uploadRows, verdicts, waitForEval } from '../support/evals';
import { l, n } from '../support/graphs';
import { startWorker } from '../support/worker';

/** in(x) → py (slow; doubles x, except for x divisible by 3, where it is off by one) → out(answer). */
const definition = {
  nodes: [
    n('in', 'InputNode', { output_schema: { x: 'string' } }),
    n('py', 'PythonFuncNode', {
      code: [
        'import time',
        'time.sleep(1)',
        'x = int(input_model["in"]["x"])',
        'return {"y": str(2 * x + (1 if x % 3 == 0 else 0))}',
      ].join('\n'),
      output_schema: { y: 'string' },
    }),
    n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'py.y' } }),
  ],
  links: [l('in', 'py'), l('py', 'out')],
};
const ROWS = Array.from({ length: 8 }, (_, i) => ({ x: String(i + 1), doubled: String(2 * (i + 1)) }));
const EXPECTED = ROWS.map((_, i) => (i + 1) % 3 !== 0);

describe('e2e: an eval run through a worker crash', function () {
  this.timeout(300_000);
  let engine: SplitEngine;
  before(async () => {
    engine = await startSplitEngine({ SPUR_LOG_LEVEL: 'error' });
  });
  after(async () => engine?.close());

  it('a worker killed (kill -9) after some rows were scored: the next worker ends the run with the score of an undisturbed run, each row scored once', async () => {
    const { http } = engine;
    const dataset = await uploadRows(http, 'doubling', ROWS);
    const suite = await createSuite(http, {
      name: 'doubling',
      dataset_id: dataset,
      answer_column: 'doubled',
      scorer: { type: 'numeric' },
    });
    const workflowId = await createWorkflow(http, 'doubler', definition);
    const launch = () =>
      http.post('/evals/launch/', {
        workflow_id: workflowId,
        eval_name: suite.id,
        output_variable: 'out-answer',
        num_samples: 8,
        concurrency: 2,
      });

    const crashed = await launch();
    assert.equal(crashed.status, 200, JSON.stringify(crashed.body));
    const partly = await waitForEval(http, crashed.body.run_id, (r) => (r.results?.scored_samples ?? 0) >= 2, 120_000);
    assert.ok(partly.results.scored_samples < 8, 'the worker is lost while rows remain');
    engine.worker.process.kill('SIGKILL');
    await engine.worker.process.exited;
    engine.worker = await startWorker(engine.api.env);

    const after = await waitForEval(http, crashed.body.run_id, undefined, 240_000);
    assert.equal(after.status, 'COMPLETED', JSON.stringify(after));
    assert.deepEqual(verdicts(after), EXPECTED);
    const examples = after.results.subset_metrics.default.per_example_results;
    assert.deepEqual(
      examples.map((e: any) => e.example_id),
      [1, 2, 3, 4, 5, 6, 7, 8],
      'each row scored once',
    );
    assert.ok(
      examples.every((e: any) => e.run_status === 'COMPLETED'),
      JSON.stringify(examples),
    );

    const undisturbed = await waitForEval(http, (await launch()).body.run_id, undefined, 240_000);
    assert.equal(undisturbed.status, 'COMPLETED');
    assert.equal(after.results.accuracy, undisturbed.results.accuracy);
    assert.deepEqual(verdicts(after), verdicts(undisturbed));
  });
});
