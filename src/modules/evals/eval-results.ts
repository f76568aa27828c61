import type { EvalResultDoc, EvalRunDoc } from '../../db/models';
import { isFinalStatus } from '../../engine/statuses';
import type { TaskDryRun } from '../../engine/dry-run';
import { type PairedCounts, pairedDelta } from '../../evals/paired-interval';
import type { CompareResponse, EvalResults, EvalRunResponse, ExampleResult } from './evals.schemas';

const NANO = 1e9;

/** What the example's nodes would have sent (stored as JSON text, src/db/eval-row-runs.ts). */
function dryRunsOf(text: string | null | undefined): ExampleResult['dry_run'] {
  if (!text) return [];
  return (JSON.parse(text) as Array<{ node_id: string } & TaskDryRun>).map((d) => ({
    node_id: d.node_id,
    request: d.request,
    output_from_run: d.output_from_run ?? null,
  }));
}

/** One scored example as PySpur's page reads it. */
function exampleOf(r: EvalResultDoc): ExampleResult {
  return {
    example_id: r.row + 1,
    prompt: r.prompt,
    predicted_answer: r.predicted,
    ground_truth_answer: r.ground_truth,
    is_correct: r.correct,
    note: r.note ?? null,
    run_id: r.run_id,
    run_status: r.run_status,
    prompt_tokens: r.prompt_tokens,
    completion_tokens: r.completion_tokens,
    cost_usd: r.cost_nano_usd === null || r.cost_nano_usd === undefined ? null : r.cost_nano_usd / NANO,
    dry_run: dryRunsOf(r.dry_run),
  };
}

/**
 * PySpur's `results`: accuracy over the examples scored so far (all of them once the run has
 * ended), the examples in row order, and what the workflow's and the judge's model calls cost.
 */
export function resultsOf(results: EvalResultDoc[]): EvalResults {
  const examples = results.map(exampleOf);
  const correct = examples.filter((e) => e.is_correct).length;
  const tally = {
    total_samples: examples.length,
    correct_predictions: correct,
    accuracy: examples.length ? correct / examples.length : 0,
  };
  const cost = results.some((r) => r.cost_nano_usd === null || r.cost_nano_usd === undefined)
    ? null
    : results.reduce((sum, r) => sum + (r.cost_nano_usd ?? 0), 0) / NANO;
  return {
    ...tally,
    scored_samples: examples.length,
    usage: {
      prompt_tokens: results.reduce((n, r) => n + r.prompt_tokens, 0),
      completion_tokens: results.reduce((n, r) => n + r.completion_tokens, 0),
      cost_usd: cost,
    },
    subset_metrics: { default: { ...tally, per_example_results: examples } },
  };
}

export function toEvalRunResponse(run: EvalRunDoc, results?: EvalResultDoc[]): EvalRunResponse {
  return {
    run_id: run._id,
    eval_name: run.eval_name,
    workflow_id: run.workflow_id,
    status: run.status,
    start_time: run.start_time.toISOString(),
    end_time: run.end_time ? run.end_time.toISOString() : null,
    ...(results ? { results: results.length > 0 || run.status === 'COMPLETED' ? resultsOf(results) : null } : {}),
    suite_id: run.suite_id,
    workflow_version: run.workflow_version,
    output_variable: run.output_variable,
    num_samples: run.num_samples,
    batch_run_id: run.batch_run_id,
    message: run.message ?? null,
  };
}

type Side = { run: EvalRunDoc; results: EvalResultDoc[] };

/** The comparison of two runs over the examples both scored: counts, delta, interval and the examples that differ. */
export function comparisonOf(
  head: { id: string; suite_id: string; workflow_id: string; versions: [number, number] },
  a: Side,
  b: Side,
): CompareResponse {
  const byRow = new Map(b.results.map((r) => [r.row, r]));
  const counts: PairedCounts = { both: 0, onlyA: 0, onlyB: 0, neither: 0 };
  const differences: CompareResponse['differences'] = [];
  for (const ra of a.results) {
    const rb = byRow.get(ra.row);
    if (!rb) continue;
    if (ra.correct && rb.correct) counts.both++;
    else if (ra.correct) counts.onlyA++;
    else if (rb.correct) counts.onlyB++;
    else counts.neither++;
    if (ra.correct !== rb.correct)
      differences.push({
        example_id: ra.row + 1,
        prompt: ra.prompt,
        ground_truth_answer: ra.ground_truth,
        a: { predicted_answer: ra.predicted, is_correct: ra.correct },
        b: { predicted_answer: rb.predicted, is_correct: rb.correct },
      });
  }
  const d = pairedDelta(counts);
  const statuses = [a.run.status, b.run.status];
  const status = statuses.every((s) => s === 'COMPLETED')
    ? 'COMPLETED'
    : (statuses.find((s) => s === 'FAILED' || s === 'CANCELED') ??
      (statuses.includes('RUNNING') ? 'RUNNING' : 'PENDING'));
  return {
    ...head,
    status,
    runs: [toEvalRunResponse(a.run), toEvalRunResponse(b.run)],
    paired_samples: d.n,
    accuracy_a: d.accuracy_a,
    accuracy_b: d.accuracy_b,
    // Over the examples scored so far a delta of 0 would read as "no difference": there is none yet.
    delta: isFinalStatus(status) ? d.delta : null,
    ci_low: d.ci_low,
    ci_high: d.ci_high,
    confidence: d.confidence,
    method: d.method,
    counts: { both: counts.both, only_a: counts.onlyA, only_b: counts.onlyB, neither: counts.neither },
    differences,
  };
}
