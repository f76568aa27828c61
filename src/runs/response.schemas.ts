import { LLM_MODES } from '../engine/provider-batch-plan';
import { RUN_STATUSES, RUN_TRIGGER_KINDS, TASK_STATUSES } from '../engine/statuses';
import { WAIT_REASONS } from '../engine/run-contract';
import { z } from '../zod';

/**
 * PySpur's shapes of a run, its tasks and its pinned workflow version, as the api answers them and
 * as the worker posts them to a run's callback.
 */

const JsonObject = z.record(z.string(), z.unknown());

export const WorkflowVersionResponse = z.object({
  version: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  definition: z.unknown(),
  definition_hash: z.string(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type WorkflowVersionResponse = z.input<typeof WorkflowVersionResponse>;

/** Beyond PySpur: LLM tokens, as the providers reported them. */
export const TokenUsageResponse = z
  .object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() })
  .openapi('TokenUsage', {
    description: 'LLM tokens used (beyond PySpur)',
  });

/** Beyond PySpur: a task's or run's tokens, and what they cost. */
export const RunUsageResponse = TokenUsageResponse.extend({
  cost_usd: z.number().nullable().openapi({
    description:
      'USD at the prices when each model request was made (GET /api/usage/prices/); null when a model called has no known price',
  }),
  cost_note: z.string().nullable().openapi({ description: 'Why cost_usd is null' }),
  by_model: z
    .array(
      z.object({
        model: z.string(),
        prompt_tokens: z.number().int(),
        completion_tokens: z.number().int(),
        calls: z.number().int(),
        cost_usd: z.number().nullable(),
      }),
    )
    .openapi({ description: 'The same, per model called (a node whose fallback model answered lists each)' }),
}).openapi('RunUsage', {
  description:
    'LLM tokens used and their cost (beyond PySpur): per task, the sum of its model calls; per run, the sum of its tasks',
});
export type RunUsageResponse = z.output<typeof RunUsageResponse>;

const DryRunRequestResponse = z.object({
  method: z.string(),
  url: z.string(),
  headers: z.record(z.string(), z.string()).openapi({
    description: 'The request headers; values of credential headers and of stored credentials show as `[redacted]`',
  }),
  body: z.string().nullable(),
  body_truncated: z.boolean().openapi({ description: 'True when `body` was cut at 64 KiB' }),
});

/** A dry run's record on a task (src/engine/dry-run.ts). */
export const TaskDryRunResponse = z.object({
  request: DryRunRequestResponse.nullable(),
  output_from_run: z.string().nullable().openapi({
    description:
      "In an eval of a suite made from runs: the row's original run, whose recorded output the node handed on; null: the node handed on a stub of its output",
  }),
});

export const TaskResponse = z.object({
  id: z.string(),
  run_id: z.string(),
  node_id: z.string(),
  parent_task_id: z.string().nullable(),
  status: z.enum(TASK_STATUSES),
  inputs: z.unknown(),
  outputs: z.unknown(),
  error: z.string().nullable(),
  start_time: z.string().nullable(),
  end_time: z.string().nullable(),
  subworkflow: z.unknown(),
  subworkflow_output: z.unknown(),
  usage: RunUsageResponse.nullable().openapi({
    description:
      'Beyond PySpur: tokens of the LLM calls this node made, and their cost; null for nodes that called no model',
  }),
  waiting_for: z.string().nullable().openapi({
    description:
      'Beyond PySpur: what the node is waiting for now: the fleet-wide limit (GET /api/limits/) whose slot it waits for, the child run (R<n>) a SubworkflowNode waits for, or `timer` (a WaitNode), `callback` (a WaitForCallbackNode); null otherwise',
  }),
  waiting_reason: z.enum(WAIT_REASONS).nullable().openapi({
    description:
      "Beyond PySpur: why the node waits (`limit`: for a slot; `breaker_open`: for the limit's breaker to close; `subworkflow`: for its child run to end; `timer`: a WaitNode's timer; `callback`: a WaitForCallbackNode's callback); null when it does not wait",
  }),
  waiting_until: z.string().nullable().openapi({
    description:
      'Beyond PySpur: while a WaitNode waits, its wake-up time; while a WaitForCallbackNode waits, its deadline (ISO 8601); null otherwise',
  }),
  waited_ms: z.number().int().openapi({
    description: 'Beyond PySpur: how long the node waited for slots of fleet-wide limits, in all',
  }),
  reused: z.boolean().openapi({
    description:
      "Beyond PySpur: true on a rerun's task whose outcome (status, inputs, outputs, times) was taken over from the original run's task; the node was not executed again",
  }),
  model: z.string().nullable().openapi({
    description:
      "Beyond PySpur: the model whose answer the node's output is (`llm_info.model`, or the `fallback_models` entry that answered after the ones before it failed); null for a node that made no single model call",
  }),
  model_failures: z.array(z.object({ model: z.string(), error: z.string() })).openapi({
    description:
      'Beyond PySpur: the models that failed for good (5xx, 429, timeout or no connection, after their retries) before `model` answered, in the order tried',
  }),
  failed_attempts: z
    .array(
      z.object({
        attempt: z.number().int(),
        start_time: z.string().nullable().openapi({ description: "Null when the attempt's worker was lost" }),
        end_time: z.string(),
        error: z.string(),
      }),
    )
    .openapi({
      description:
        "Beyond PySpur: each attempt of the node that failed, in order (Temporal then tried it again, or the node failed with it; a lost worker's attempt says so). A completed task's own times are its last attempt's",
    }),
  dry_run: TaskDryRunResponse.nullable().openapi({
    description:
      "Beyond PySpur: set in a dry run (an eval's rows, their child runs) on a node that would have acted on the outside world (posted, sent, written): it sent nothing, `request` is what it would have sent (credentials redacted; null for a callback wait, which sends nothing itself), and its outputs are a stub of its output schema",
  }),
});
export type TaskResponse = z.output<typeof TaskResponse>;

export const RunTriggerResponse = z
  .object({
    kind: z.enum(RUN_TRIGGER_KINDS),
    id: z.string().openapi({
      description: 'The schedule (SC<n>), webhook trigger (TR<n>) or parent run (R<n>, a SubworkflowNode)',
    }),
    scheduled_time: z.iso.datetime().nullable().openapi({ description: "A schedule's fire time (UTC)" }),
    delivery_id: z
      .string()
      .nullable()
      .openapi({ description: "A webhook request's delivery id (its dedupe header's value), if it sent one" }),
  })
  .openapi('RunTrigger');

export const ProviderBatchResponse = z
  .object({
    round: z.number().int(),
    node_id: z.string(),
    provider: z.string(),
    batch_id: z.string().nullable().openapi({ description: "The provider's id for the batch (null while it is made)" }),
    status: z.string().openapi({ description: "The provider's word for its state, as last polled" }),
    requests: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    created_at: z.string().nullable(),
    ended_at: z.string().nullable(),
  })
  .openapi('ProviderBatch');

export const RunResponse = z
  .object({
    id: z.string(),
    workflow_id: z.string(),
    workflow_version_id: z.string().nullable(),
    workflow_version: WorkflowVersionResponse.nullable(),
    status: z.enum(RUN_STATUSES),
    start_time: z.string(),
    end_time: z.string().nullable(),
    initial_inputs: z.record(z.string(), JsonObject).nullable(),
    outputs: z.record(z.string(), JsonObject).nullable(),
    tasks: z.array(TaskResponse),
    parent_run_id: z.string().nullable(),
    run_type: z.string(),
    output_file_id: z.string().nullable(),
    input_dataset_id: z.string().nullable(),
    message: z.string().nullable(),
    duration: z.number().nullable(),
    percentage_complete: z.number(),
    usage: RunUsageResponse.nullable().openapi({
      description: 'Beyond PySpur: tokens of all LLM calls of the run, and their cost; null when it made none',
    }),
    rerun_of: z.string().nullable().openapi({
      description: 'Beyond PySpur: set on a rerun (POST /run/{run_id}/rerun/) to the id of the run it repeats',
    }),
    rerun_from_node_id: z
      .string()
      .nullable()
      .openapi({ description: 'Beyond PySpur: the node a rerun started from (it and its descendants ran again)' }),
    trigger: RunTriggerResponse.nullable().openapi({
      description: 'Beyond PySpur: the schedule or webhook that started the run; null when a client started it',
    }),
    llm_mode: z.enum(LLM_MODES).nullable().openapi({
      description: "Beyond PySpur: a batch run's llm_mode (null on other runs)",
    }),
    provider_batches: z.array(ProviderBatchResponse).nullable().openapi({
      description:
        "Beyond PySpur: a provider-batch run's provider batches, one per node and round (null on other runs)",
    }),
  })
  .openapi('RunResponse');
export type RunResponse = z.input<typeof RunResponse>;
