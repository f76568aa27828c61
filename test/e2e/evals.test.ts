import assert from 'node:assert/strict';
import { type Engine, isFinal, waitForRun } from '../support/engine';
import type { FakeLlmServer, RecordedRequest } from '../support/fake-llm-server';
import { startLlmEngine } from '../support/llm-engine';
import { createSuite, createWorkflow, echoDefinition, uploadRows, verdicts, waitForEval } from '../support/evals';
import { l, n } from '../support/graphs';

/**
 * Each scorer on a right answer (row 1) and a wrong one (row 2): the workflow answers with the
 * row's `reply`. A case is named by its scorer's type unless it says otherwise.
 */
const CASES: {
  name?: string;
  scorer: Record<string, unknown>;
  right: [unknown, unknown];
  wrong: [unknown, unknown];
}[] = [
  { scorer: { type: 'exact' }, right: ['Paris', 'Paris'], wrong: ['paris', 'Paris'] },
  {
    scorer: { type: 'normalized' },
    right: ['  the Eiffel-Tower!', 'The eiffel tower'],
    wrong: ['Eiffel', 'The eiffel tower'],
  },
  {
    scorer: { type: 'numeric' },
    right: ['12 + 1,222 = 1,234. The answer is 1,234 apples.', '1234'],
    wrong: ['The answer is 12, not 13.', '13'],
  },
  {
    // 0.005 off is within the tolerance (the default, 1e-6, would mark it wrong); 0.02 off is not.
    name: 'numeric-tolerance',
    scorer: { type: 'numeric', tolerance: 0.01 },
    right: ['The answer is 3.145', '3.14'],
    wrong: ['The answer is 3.16', '3.14'],
  },
  {
    scorer: { type: 'regex', pattern: 'COLOU?R:\\s*(\\w+)' },
    right: ['thinking… colour: Blue', 'blue'],
    wrong: ['color: red', 'blue'],
  },
  { scorer: { type: 'choice' }, right: ['Let me see. Answer: C', 'C'], wrong: ['Answer: (B)', 'C'] },
  {
    scorer: {
      type: 'json_schema',
      schema: { type: 'object', properties: { age: { type: 'integer' } }, required: ['age'] },
    },
    right: ['Here: {"name": "Ada", "age": 36}', ''],
    wrong: ['{"name": "Ada"}', ''],
  },
  {
    scorer: {
      type: 'python',
      code: 'p = input_model.predicted.strip().lower()\nreturn {"correct": p == input_model.expected.lower(), "note": "row " + input_model.row.reply}',
    },
    right: [' Mercury ', 'mercury'],
    wrong: ['Venus', 'mercury'],
  },
  { scorer: { type: 'llm_judge', model: 'openai/gpt-4o-mini' }, right: ['4', 'four'], wrong: ['5', 'four'] },
];

/**
 * The model: as a judge it calls an answer correct when it is the reference's number (4 = four),
 * as a real model would; asked anything else, it answers with the question's last word.
 */
function judge(request: RecordedRequest) {
  const user = String(request.body.messages.at(-1).content);
  if (!String(request.body.messages[0].content).startsWith('You grade answers'))
    return { content: JSON.stringify({ output: user.split(' ').at(-1) }), usage: { input: 50, output: 5 } };
  const graded = /Answer to grade:\s*(\S+)/.exec(user)?.[1];
  return {
    content: JSON.stringify({ correct: graded === '4', reason: `graded ${graded}` }),
    usage: { input: 120, output: 8 },
  };
}

describe('e2e: eval suites score a workflow’s answers', function () {
  this.timeout(300_000);
  let engine: Engine;
  let fake: FakeLlmServer;
  let workflowId: string;
  before(async () => {
    ({ engine, fake } = await startLlmEngine());
    fake.respondWith(judge);
    workflowId = await createWorkflow(engine.http, 'echo for evals', echoDefinition());
  });
  after(async () => {
    await engine?.close();
    await fake?.close();
  });

  it('each scorer marks the right answer correct and the wrong one incorrect', async () => {
    const launched = await Promise.all(
      CASES.map(async ({ name, scorer, right, wrong }) => {
        const type = name ?? (scorer.type as string);
        const rows = [right, wrong].map(([reply, answer]) => ({ reply, answer }));
        const dataset = await uploadRows(engine.http, `scorer-${type}`, rows);
        const suite = await createSuite(engine.http, {
          name: `suite-${type}`,
          dataset_id: dataset,
          answer_column: 'answer',
          scorer,
        });
        const res = await engine.http.post('/evals/launch/', {
          workflow_id: workflowId,
          eval_name: suite.name,
          output_variable: 'out-answer',
          num_samples: 2,
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.match(res.body.run_id, /^ER\d+$/);
        return { type, runId: res.body.run_id as string };
      }),
    );
    for (const { type, runId } of launched) {
      const run = await waitForEval(engine.http, runId);
      assert.equal(run.status, 'COMPLETED', `${type}: ${JSON.stringify(run)}`);
      assert.deepEqual(verdicts(run), [true, false], `${type}: ${JSON.stringify(run.results.subset_metrics)}`);
      assert.equal(run.results.accuracy, 0.5, type);
      assert.equal(run.results.total_samples, 2, type);
    }
  });

  it('shows the extracted prediction and ground truth per example, and the judge’s tokens and cost', async () => {
    const runs = (await engine.http.get('/evals/runs/')).body as Record<string, any>[];
    const byName = new Map(runs.map((r) => [r.eval_name, r.run_id]));
    const numeric = (await engine.http.get(`/evals/runs/${byName.get('suite-numeric')}`)).body;
    const [first] = numeric.results.subset_metrics.default.per_example_results;
    assert.equal(first.predicted_answer, '1234');
    assert.equal(first.ground_truth_answer, '1234');
    assert.equal(first.prompt, '12 + 1,222 = 1,234. The answer is 1,234 apples.');
    assert.equal(first.example_id, 1);

    const judged = (await engine.http.get(`/evals/runs/${byName.get('suite-llm_judge')}`)).body;
    const examples = judged.results.subset_metrics.default.per_example_results;
    assert.deepEqual(
      examples.map((e: any) => [e.prompt_tokens, e.completion_tokens, e.note]),
      [
        [120, 8, 'graded 4'],
        [120, 8, 'graded 5'],
      ],
    );
    assert.ok(
      examples.every((e: any) => e.cost_usd > 0),
      JSON.stringify(examples),
    );
    assert.equal(judged.results.usage.prompt_tokens, 240);
    const ledger = (await engine.http.get('/usage/?group_by=workflow')).body;
    const mine = ledger.groups.find((g: any) => g.key === workflowId);
    assert.equal(mine?.prompt_tokens, 240, JSON.stringify(ledger));

    const python = (await engine.http.get(`/evals/runs/${byName.get('suite-python')}`)).body;
    assert.deepEqual(
      python.results.subset_metrics.default.per_example_results.map((e: any) => e.note),
      ['row  Mercury ', 'row Venus'],
    );
  });

  it('the batch rows are runs of the workflow, children of the eval’s batch run', async () => {
    const [latest] = (await engine.http.get('/evals/runs/')).body as Record<string, any>[];
    const batch = (await engine.http.get(`/run/${latest!.batch_run_id}/`)).body;
    assert.equal(batch.status, 'COMPLETED', JSON.stringify(batch));
    const rowRun = (await engine.http.get(`/run/${latest!.batch_run_id}-1/`)).body;
    assert.equal(rowRun.parent_run_id, latest!.batch_run_id);
    assert.equal(rowRun.workflow_id, workflowId);
    const described = await engine.api.temporal.workflow
      .getHandle(`${engine.api.env.SPUR_WORKFLOW_ID_PREFIX ?? ''}run-${latest!.batch_run_id}-1`)
      .describe();
    assert.equal(described.status.name, 'COMPLETED');
  });

  it('counts the workflow’s own model calls per example: tokens and cost', async () => {
    const definition = {
      nodes: [
        n('in', 'InputNode', { output_schema: { question: 'string' } }),
        n('llm', 'SingleLLMCallNode', {
          llm_info: { model: 'openai/gpt-4o-mini', max_tokens: 50, temperature: 0 },
          user_message: 'Answer with the last word of: {{in.question}}',
        }),
        n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'llm.output' } }),
      ],
      links: [l('in', 'llm'), l('llm', 'out')],
    };
    const llmWorkflow = await createWorkflow(engine.http, 'last word', definition);
    const dataset = await uploadRows(engine.http, 'last words', [
      { question: 'say blue', answer: 'blue' },
      { question: 'say red', answer: 'green' },
    ]);
    await createSuite(engine.http, {
      name: 'last words',
      dataset_id: dataset,
      answer_column: 'answer',
      scorer: { type: 'exact' },
    });
    const res = await engine.http.post('/evals/launch/', {
      workflow_id: llmWorkflow,
      eval_name: 'last words',
      output_variable: 'out-answer',
      num_samples: 2,
    });
    const run = await waitForEval(engine.http, res.body.run_id);
    assert.deepEqual(verdicts(run), [true, false]);
    const examples = run.results.subset_metrics.default.per_example_results;
    assert.deepEqual(
      examples.map((e: any) => [e.prompt_tokens, e.completion_tokens]),
      [
        [50, 5],
        [50, 5],
      ],
    );
    const rowRun = (await engine.http.get(`/run/${examples[0].run_id}/`)).body;
    assert.equal(examples[0].cost_usd, rowRun.usage.cost_usd, 'the example costs what its run cost');
    assert.ok(run.results.usage.cost_usd > 0);
    assert.deepEqual([run.results.usage.prompt_tokens, run.results.usage.completion_tokens], [100, 10]);
  });

  it('a row whose run fails is an incorrect example saying why', async () => {
    const definition = {
      nodes: [
        n('in', 'InputNode', { output_schema: { reply: 'string' } }),
        n('py', 'PythonFuncNode', {
          code: 'if input_model["in"]["reply"] == "boom":\n    raise ValueError("row says boom")\nreturn {"y": input_model["in"]["reply"]}',
          output_schema: { y: 'string' },
        }),
        n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'py.y' } }),
      ],
      links: [l('in', 'py'), l('py', 'out')],
    };
    const failing = await createWorkflow(engine.http, 'sometimes fails', definition);
    const dataset = await uploadRows(engine.http, 'booms', [
      { reply: 'fine', answer: 'fine' },
      { reply: 'boom', answer: 'boom' },
    ]);
    await createSuite(engine.http, {
      name: 'booms',
      dataset_id: dataset,
      answer_column: 'answer',
      scorer: { type: 'exact' },
    });
    const res = await engine.http.post('/evals/launch/', {
      workflow_id: failing,
      eval_name: 'booms',
      output_variable: 'out-answer',
      num_samples: 2,
    });
    const run = await waitForEval(engine.http, res.body.run_id);
    assert.equal(run.status, 'COMPLETED', 'a failed row is a wrong answer, not a failed eval');
    const [, boom] = run.results.subset_metrics.default.per_example_results;
    assert.equal(boom.is_correct, false);
    assert.equal(boom.run_status, 'FAILED');
    assert.equal(boom.predicted_answer, '');
    assert.match(boom.note, /row says boom/);
  });

  it('cancelling an eval run stops its batch; the rows that ended keep their scores', async () => {
    const definition = {
      nodes: [
        n('in', 'InputNode', { output_schema: { reply: 'string' } }),
        n('py', 'PythonFuncNode', {
          code: 'import time\ntime.sleep(1.5)\nreturn {"y": input_model["in"]["reply"]}',
          output_schema: { y: 'string' },
        }),
        n('out', 'OutputNode', { output_schema: { answer: 'string' }, output_map: { answer: 'py.y' } }),
      ],
      links: [l('in', 'py'), l('py', 'out')],
    };
    const slow = await createWorkflow(engine.http, 'slow echo', definition);
    const rows = Array.from({ length: 10 }, (_, i) => ({ reply: `r${i}`, answer: `r${i}` }));
    const dataset = await uploadRows(engine.http, 'slow rows', rows);
    await createSuite(engine.http, {
      name: 'slow',
      dataset_id: dataset,
      answer_column: 'answer',
      scorer: { type: 'exact' },
    });
    const res = await engine.http.post('/evals/launch/', {
      workflow_id: slow,
      eval_name: 'slow',
      output_variable: 'out-answer',
      num_samples: 10,
      concurrency: 1,
    });
    await waitForEval(engine.http, res.body.run_id, (r) => (r.results?.scored_samples ?? 0) >= 1);
    const cancel = await engine.http.post(`/evals/runs/${res.body.run_id}/cancel/`);
    assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
    const run = await waitForEval(engine.http, res.body.run_id);
    assert.equal(run.status, 'CANCELED');
    const scored = run.results.subset_metrics.default.per_example_results;
    assert.ok(scored.length >= 1 && scored.length < 10, `${scored.length} rows scored`);
    assert.ok(
      scored.every((e: any) => e.is_correct),
      'rows that ended keep their scores',
    );
    // The batch's record closes as its own workflow ends, which may be just after the eval's.
    const batch = await waitForRun(engine.http, run.batch_run_id, isFinal);
    assert.equal(batch.status, 'CANCELED');
  });
});
