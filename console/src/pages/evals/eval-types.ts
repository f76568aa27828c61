// The eval shapes of the REST API (src/modules/evals/evals.schemas.ts), the fields the console reads.
// Declared here rather than imported: that schema module pulls in the node registry, which the
// console's stricter compiler settings refuse. test/browser/console-evals.test.ts has the compiler
// check that the server's answers fit these.

export type EvalStatus = 'PENDING' | 'RUNNING' | 'COMPLETED' | 'FAILED' | 'CANCELED';

/** GET /api/evals/suites/ and /api/evals/suites/{id}/. */
export interface Suite {
  id: string;
  name: string;
  description: string;
  type: string;
  dataset_id: string;
  answer_column: string;
  input_columns: string[];
  num_samples: number;
  scorer: { type: string };
  pauses: string;
  live_node_types: string[];
  source_run_column: string | null;
  created_at: string;
  updated_at: string;
}

/** What a row's node would have sent, had the eval not been a dry run (null: a callback wait, which sends nothing). */
export interface WouldBeRequest {
  node_id: string;
  request: {
    method: string;
    url: string;
    headers: Record<string, string>;
    body: string | null;
    body_truncated: boolean;
  } | null;
  output_from_run: string | null;
}

/** One scored row of an eval run. */
export interface Example {
  example_id: number;
  prompt: string;
  predicted_answer: string;
  ground_truth_answer: string;
  is_correct: boolean;
  note: string | null;
  run_id: string;
  run_status: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number | null;
  dry_run: WouldBeRequest[];
}

export interface Tally {
  total_samples: number;
  correct_predictions: number;
  accuracy: number;
}

export interface EvalResults extends Tally {
  scored_samples: number;
  usage: { prompt_tokens: number; completion_tokens: number; cost_usd: number | null };
  subset_metrics: { default: Tally & { per_example_results: Example[] } };
}

/** GET /api/evals/runs/ (no `results`) and /api/evals/runs/{id} (with them, null until a row is scored). */
export interface EvalRun {
  run_id: string;
  eval_name: string;
  workflow_id: string;
  status: EvalStatus;
  start_time: string | null;
  end_time: string | null;
  results?: EvalResults | null | undefined;
  suite_id: string;
  workflow_version: number;
  output_variable: string;
  num_samples: number;
  batch_run_id: string;
  message: string | null;
}

/** GET /api/evals/compare/{id}/: version B against version A on the same rows. */
export interface Comparison {
  id: string;
  suite_id: string;
  workflow_id: string;
  versions: [number, number];
  status: EvalStatus;
  runs: [EvalRun, EvalRun];
  paired_samples: number;
  accuracy_a: number;
  accuracy_b: number;
  /** B − A; null until the comparison has ended. */
  delta: number | null;
  ci_low: number;
  ci_high: number;
  confidence: number;
  method: string;
  counts: { both: number; only_a: number; only_b: number; neither: number };
}

/** GET /api/wf/ (the fields the forms offer). */
export interface WorkflowChoice {
  id: string;
  name: string;
}

/** GET /api/wf/{id}/output_variables/. */
export interface OutputVariable {
  node_id: string;
  variable_name: string;
  prefixed_variable: string;
}

/** GET /api/wf/{id}/versions/. */
export interface WorkflowVersion {
  version: number;
  name: string;
  created_at: string;
}

/** An eval run or comparison still going: pages read it again until it ends. */
export const isOpen = (status: EvalStatus): boolean => status === 'PENDING' || status === 'RUNNING';
