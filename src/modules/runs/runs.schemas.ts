import { LLM_MODES } from '../../engine/provider-batch-plan';
import { z } from '../../zod';
import { PageQuery } from '../../http/pagination';
import { RUN_STATUSES, RUN_TRIGGER_KINDS } from '../../engine/statuses';
import { CallbackRequest } from '../callbacks/callbacks.schemas';
import { withoutReservedKey } from '../../runs/values';

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
  partial_outputs: withoutReservedKey(
    z
      .record(z.string(), z.union([JsonObject, z.array(JsonObject)]))
      .nullable()
      .default(null),
  ),
});
export type PartialRunInput = z.output<typeof PartialRunRequest>;

/** PySpur's BatchRunRequestSchema; mini_batch_size bounded (PySpur takes any int). */
export const BatchRunRequest = z.object({
  dataset_id: z.string().min(1).max(200),
  mini_batch_size: z.number().int().min(1).max(1000).default(10),
  /** Beyond PySpur: `provider_batch` sends each node's model calls as one provider batch (docs/batch-mode.md). */
  llm_mode: z.enum(LLM_MODES).default('online'),
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
  parent_only: z
    .enum(['true', 'false', '1', '0'])
    .default('true')
    .transform((v) => v === 'true' || v === '1'),
  run_type: z.string().max(100).optional(),
  /** Beyond PySpur (the console's filters): one workflow's runs, a status, what started them, a start-time window. */
  workflow_id: z.string().min(1).max(200).optional(),
  status: z.enum(RUN_STATUSES).optional(),
  trigger: z
    .enum([...RUN_TRIGGER_KINDS, 'client'])
    .optional()
    .openapi({ description: 'What started the runs: a schedule, a webhook, a parent run, or a client (`client`)' }),
  start_date: isoDate.optional(),
  end_date: isoDate.optional(),
});

export const RunIdParams = z.object({ run_id: z.string().min(1).max(200) });

/** What a blocking run answers when it outlives the configured wait: poll the run instead. */
export const RunStillGoing = z.object({ run_id: z.string(), status: z.enum(RUN_STATUSES), detail: z.string() });
export const RunOutputsById = z.record(z.string(), JsonObject);
