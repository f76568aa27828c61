import { LLM_MODES } from '../../engine/provider-batch-plan';
import { EVAL_RUN_STATUSES } from '../../db/models/eval-run.model';
import { ScorerConfig } from '../../evals/scorer-config';
import { z } from '../../zod';
import { RUN_STATUSES } from '../../engine/statuses';
import { DRY_RUN_PAUSES } from '../../engine/dry-run';
import { NODE_TYPES } from '../../nodes/registry';
import { TaskDryRunResponse } from '../../runs/response.schemas';

/** Most rows one eval run scores: a run is one batch, and each of its rows a workflow of its own. */
export const MAX_EVAL_SAMPLES = 10_000;

const Id = z.string().min(1).max(200);
const Column = z.string().min(1).max(500);

export const SuiteIdParams = z.object({ suite_id: Id });
export const EvalRunIdParams = z.object({ eval_run_id: Id });
export const ComparisonIdParams = z.object({ comparison_id: Id });

const NODE_TYPE_NAMES: ReadonlySet<string> = new Set(NODE_TYPES.map((t) => t.name));

/** An eval runs its rows dry (src/engine/dry-run.ts): how its pauses resolve, which node types act for real. */
const DryRunSettings = {
  pauses: z.enum(DRY_RUN_PAUSES).default('decline').openapi({
    description:
      "How a HumanInterventionNode resolves in this suite's evals, with no one asked: approve (its input passes on) or decline (the row's run ends CANCELED)",
  }),
  live_node_types: z
    .array(
      z
        .string()
        .refine((name) => NODE_TYPE_NAMES.has(name), { message: 'Not a node type (see /api/node/supported_types/)' }),
    )
    .max(50)
    .default([])
    .openapi({
      description:
        "Node types declared safe to act for real in this suite's evals. Every other node that would post, send or write (Slack, e-mail, GitHub and Reddit writes, HTTP requests other than GET/HEAD/OPTIONS, MCP tools not declared readOnlyHint) sends nothing and hands on a stub of its output; the task and the example show what it would have sent",
    }),
};

export const SuiteRequest = z
  .object({
    name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .openapi({ description: "Unique: PySpur's page launches a suite by its name" }),
    description: z.string().max(10_000).default(''),
    type: z.string().max(100).default('Custom').openapi({ description: 'Shown as the card\'s "Type"' }),
    dataset_id: Id,
    answer_column: Column.openapi({ description: "The dataset column holding each row's expected answer" }),
    input_columns: z.array(Column).max(100).default([]).openapi({
      description:
        "Columns shown as the prompt; the workflow's InputNode fields are fed from the same-named columns (empty: every column but the answer)",
    }),
    scorer: ScorerConfig,
    ...DryRunSettings,
  })
  .openapi('EvalSuiteRequest');
export type SuiteInput = z.output<typeof SuiteRequest>;

/** Most runs one suite may be made from. */
export const MAX_SUITE_RUNS = 5_000;

export const SuiteFromRunsRequest = z
  .object({
    name: SuiteRequest.shape.name,
    description: z.string().max(10_000).default(''),
    type: z.string().max(100).default('Regression').openapi({ description: 'Shown as the card\'s "Type"' }),
    workflow_id: Id,
    filter: z
      .object({
        status: z.array(z.enum(RUN_STATUSES)).min(1).max(RUN_STATUSES.length).default(['COMPLETED']),
        started_after: z.iso.datetime({ offset: true }).optional(),
        started_before: z.iso.datetime({ offset: true }).optional(),
        run_type: z.string().min(1).max(50).optional(),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_SUITE_RUNS)
          .default(1000)
          .openapi({
            description: `The newest runs that match, at most ${MAX_SUITE_RUNS}`,
          }),
      })
      .strict()
      .default({ status: ['COMPLETED'], limit: 1000 }),
    output_variable: z.string().min(1).max(500).openapi({
      description:
        "A prefixed_variable of the workflow's output-variables listing: each run's recorded value is the row's expected answer",
    }),
    scorer: ScorerConfig.default({ type: 'json_equal' }),
    ...DryRunSettings,
  })
  .strict()
  .openapi('EvalSuiteFromRunsRequest');
export type SuiteFromRunsInput = z.output<typeof SuiteFromRunsRequest>;

export const SuiteResponse = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    type: z.string(),
    dataset_id: z.string(),
    answer_column: z.string(),
    input_columns: z.array(z.string()),
    num_samples: z.number().int(),
    scorer: ScorerConfig,
    pauses: DryRunSettings.pauses.unwrap(),
    live_node_types: z.array(z.string()),
    source_run_column: z.string().nullable().openapi({
      description:
        "Set on a suite made from runs: the dataset column naming each row's run. In its evals a node that would act hands on the output that run recorded for it (else a stub)",
    }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('EvalSuite');
export type SuiteResponse = z.output<typeof SuiteResponse>;

/** PySpur's eval card (its `GET /evals/` item), plus the suite's id. */
export const EvalCard = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    type: z.string(),
    num_samples: z.number().int().openapi({ description: 'Rows one run may score (the dataset, at most 10 000)' }),
    paper_link: z.string(),
    file_name: z.string(),
  })
  .openapi('EvalCard');

const Samples = z.number().int().min(1).max(MAX_EVAL_SAMPLES);
const Concurrency = z.number().int().min(1).max(50).default(4).openapi({ description: 'Rows running at once' });

/** Beyond PySpur: the rows' model calls online, or as provider batches at half the price (docs/batch-mode.md). */
const LlmModeField = z.enum(LLM_MODES).default('online').openapi({
  description:
    '`provider_batch`: each node’s model calls of the eval’s rows go out as one provider batch (docs/batch-mode.md)',
});

/** PySpur's EvalRunRequest; `eval_name` is a suite's name (or id). */
export const LaunchRequest = z
  .object({
    workflow_id: Id,
    eval_name: Id,
    output_variable: z
      .string()
      .min(1)
      .max(500)
      .openapi({ description: 'A prefixed_variable of the output-variables listing' }),
    num_samples: Samples.default(10).openapi({ description: "The suite's first rows, in dataset order" }),
    concurrency: Concurrency,
    llm_mode: LlmModeField,
  })
  .openapi('EvalRunRequest');
export type LaunchInput = z.output<typeof LaunchRequest>;

export const ExampleResult = z.object({
  example_id: z.number().int().openapi({ description: 'The dataset row, from 1' }),
  prompt: z.string(),
  predicted_answer: z.string(),
  ground_truth_answer: z.string(),
  is_correct: z.boolean(),
  note: z.string().nullable(),
  run_id: z.string(),
  run_status: z.string(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  cost_usd: z.number().nullable(),
  dry_run: z.array(TaskDryRunResponse.extend({ node_id: z.string() })).openapi({
    description:
      "Beyond PySpur: the row run's nodes that would have acted (posted, sent, written) and sent nothing, with what each would have sent (the task's `dry_run`)",
  }),
});
export type ExampleResult = z.output<typeof ExampleResult>;

const Tally = z.object({
  total_samples: z.number().int(),
  correct_predictions: z.number().int(),
  accuracy: z.number(),
});
const Usage = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  cost_usd: z.number().nullable().openapi({ description: 'Null when a model had no known price' }),
});

/** PySpur's results: the page reads `accuracy` and `subset_metrics.default.per_example_results`. */
export const EvalResults = Tally.extend({
  scored_samples: z.number().int(),
  usage: Usage,
  subset_metrics: z.object({ default: Tally.extend({ per_example_results: z.array(ExampleResult) }) }),
}).openapi('EvalResults');
export type EvalResults = z.output<typeof EvalResults>;

export const EvalRunResponse = z
  .object({
    run_id: z.string(),
    eval_name: z.string(),
    workflow_id: z.string(),
    status: z.enum(EVAL_RUN_STATUSES),
    start_time: z.iso.datetime().nullable(),
    end_time: z.iso.datetime().nullable(),
    results: EvalResults.nullable().optional(),
    suite_id: z.string(),
    workflow_version: z.number().int(),
    output_variable: z.string(),
    num_samples: z.number().int(),
    batch_run_id: z.string().openapi({ description: 'The batch run whose rows are the examples' }),
    message: z.string().nullable(),
  })
  .openapi('EvalRunResponse');
export type EvalRunResponse = z.output<typeof EvalRunResponse>;

export const CompareRequest = z
  .object({
    suite: Id.openapi({ description: "The suite's id or name" }),
    workflow_id: Id,
    versions: z
      .tuple([z.number().int().min(1), z.number().int().min(1)])
      .refine(([a, b]) => a !== b, 'two different versions')
      .openapi({ description: 'Workflow version numbers [a, b] (GET /wf/{id}/versions/)' }),
    output_variable: z.string().min(1).max(500).optional().openapi({
      description:
        'A prefixed_variable of the output-variables listing; may be left out when the two versions have one output variable between them',
    }),
    num_samples: Samples.default(10),
    concurrency: Concurrency,
    llm_mode: LlmModeField,
  })
  .openapi('EvalCompareRequest');
export type CompareInput = z.output<typeof CompareRequest>;

const Side = z.object({ predicted_answer: z.string(), is_correct: z.boolean() });

export const CompareResponse = z
  .object({
    id: z.string(),
    suite_id: z.string(),
    workflow_id: z.string(),
    versions: z.tuple([z.number().int(), z.number().int()]),
    status: z.enum(EVAL_RUN_STATUSES).openapi({ description: 'COMPLETED once both runs are' }),
    runs: z.tuple([EvalRunResponse, EvalRunResponse]),
    paired_samples: z.number().int().openapi({ description: 'Examples scored in both runs' }),
    accuracy_a: z.number(),
    accuracy_b: z.number(),
    delta: z.number().nullable().openapi({
      description: 'accuracy_b − accuracy_a over the paired examples; null until the comparison has ended',
    }),
    ci_low: z.number(),
    ci_high: z.number(),
    confidence: z.number(),
    method: z.string(),
    counts: z.object({
      both: z.number().int(),
      only_a: z.number().int(),
      only_b: z.number().int(),
      neither: z.number().int(),
    }),
    differences: z
      .array(
        z.object({
          example_id: z.number().int(),
          prompt: z.string(),
          ground_truth_answer: z.string(),
          a: Side,
          b: Side,
        }),
      )
      .openapi({ description: 'The paired examples one version got right and the other wrong' }),
  })
  .openapi('EvalComparison');
export type CompareResponse = z.output<typeof CompareResponse>;
