import { z } from '../../http/zod';
import { PageQuery } from '../../http/pagination';
import { RUN_STATUSES, TASK_STATUSES } from '../../engine/statuses';
import { WorkflowVersionResponse } from '../workflows/workflows.schemas';
import { CallbackRequest } from '../callbacks/callbacks.schemas';
import { withoutReservedKey } from './run-values';

const JsonObject = z.record(z.string(), z.unknown());

export const StartRunRequest = z.object({
  initial_inputs: withoutReservedKey(z.record(z.string(), JsonObject).nullable().default(null)),
  parent_run_id: z.string().max(200).nullable().default(null),
  files: z.record(z.string(), z.array(z.string())).nullable().default(null),
  /** Beyond PySpur: where to post the run's events (signed). */
  callback: CallbackRequest.optional(),
});
export type StartRunInput = z.output<typeof StartRunRequest>;

export const PartialRunRequest = z.object({
  node_id: z.string().min(1),
  rerun_predecessors: z.boolean().default(false),
  initial_inputs: withoutReservedKey(z.record(z.string(), JsonObject).nullable().default(null)),
  partial_outputs: withoutReservedKey(z.record(z.string(), z.union([JsonObject, z.array(JsonObject)])).nullable().default(null)),
});
export type PartialRunInput = z.output<typeof PartialRunRequest>;

/** PySpur's BatchRunRequestSchema; mini_batch_size bounded (PySpur takes any int). */
export const BatchRunRequest = z.object({
  dataset_id: z.string().min(1).max(200),
  mini_batch_size: z.number().int().min(1).max(1000).default(10),
  /** Beyond PySpur: where to post the batch's final event (signed). */
  callback: CallbackRequest.optional(),
});
export type BatchRunInput = z.output<typeof BatchRunRequest>;

export const RunTypeQuery = z.object({ run_type: z.string().max(100).default('interactive') });

const isoDate = z.string().refine((v) => !Number.isNaN(Date.parse(v)), { message: 'Input should be a valid datetime' });
export const WorkflowRunsQuery = PageQuery.extend({
  status: z.enum(RUN_STATUSES).optional(),
  start_date: isoDate.optional(),
  end_date: isoDate.optional(),
});

export const AllRunsQuery = PageQuery.extend({
  parent_only: z.enum(['true', 'false', '1', '0']).default('true').transform((v) => v === 'true' || v === '1'),
  run_type: z.string().max(100).optional(),
});

export const RunIdParams = z.object({ run_id: z.string().min(1).max(200) });

/** Beyond PySpur: LLM tokens, as the providers reported them. */
export const TokenUsageResponse = z
  .object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() })
  .openapi('TokenUsage', { description: 'LLM tokens used (beyond PySpur): per task, the sum of its model calls; per run, the sum of its tasks' });

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
  usage: TokenUsageResponse.nullable().openapi({ description: 'Beyond PySpur: tokens of the LLM calls this node made; null for nodes that called no model' }),
  reused: z.boolean().openapi({
    description: "Beyond PySpur: true on a rerun's task whose outcome (status, inputs, outputs, times) was taken over from the original run's task; the node was not executed again",
  }),
});
export type TaskResponse = z.output<typeof TaskResponse>;

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
    usage: TokenUsageResponse.nullable().openapi({ description: 'Beyond PySpur: tokens of all LLM calls of the run; null when it made none' }),
    rerun_of: z.string().nullable().openapi({ description: 'Beyond PySpur: set on a rerun (POST /run/{run_id}/rerun/) to the id of the run it repeats' }),
    rerun_from_node_id: z.string().nullable().openapi({ description: 'Beyond PySpur: the node a rerun started from (it and its descendants ran again)' }),
  })
  .openapi('RunResponse');
export type RunResponse = z.input<typeof RunResponse>;

/** What a blocking run answers when it outlives the configured wait: poll the run instead. */
export const RunStillGoing = z.object({ run_id: z.string(), status: z.enum(RUN_STATUSES), detail: z.string() });
export const RunOutputsById = z.record(z.string(), JsonObject);
