import type { LlmMode } from '../engine/provider-batch-plan';
import type { ProviderBatchView } from '../db/provider-batch-records';
import type { FailedAttempt } from '../db/runs/node-attempts';
import type { RunDoc, WorkflowVersionDoc } from '../db/models';
import { type TaskRecord, type TokenUsage, addUsage } from '../engine/run-contract';
import { fromJsonText } from '../db/json-text';
import type { RunTriggerKind } from '../engine/statuses';
import { pyDateTime } from '../timestamps';
import { costOf, usdOf } from '../usage/price-book';
import type { RunResponse, RunUsageResponse, TaskResponse, WorkflowVersionResponse } from './response.schemas';

const iso = (d: Date | null | undefined) => (d ? pyDateTime(d) : null);

export function toTaskResponse(runId: string, t: TaskRecord, failedAttempts: FailedAttempt[] = []): TaskResponse {
  return {
    id: t.id,
    run_id: runId,
    node_id: t.node_id,
    parent_task_id: null,
    status: t.status,
    inputs: t.inputs ?? (t.status === 'PENDING' ? null : {}),
    outputs: t.outputs,
    error: t.error,
    start_time: t.start_time,
    end_time: t.end_time,
    subworkflow: null,
    subworkflow_output: t.subworkflow_output,
    usage: usageResponse(t.usage),
    waiting_for: t.waiting_for ?? null,
    waiting_reason: t.waiting_for ? (t.waiting_reason ?? 'limit') : null,
    waiting_until: t.waiting_for ? (t.waiting_until ?? null) : null,
    waited_ms: t.waited_ms ?? 0,
    reused: t.reused === true,
    model: t.model ?? null,
    model_failures: t.model_failures ?? [],
    failed_attempts: failedAttempts,
    dry_run: t.dry_run ? { request: t.dry_run.request, output_from_run: t.dry_run.output_from_run ?? null } : null,
  };
}

function usageResponse(usage: TokenUsage | undefined): RunUsageResponse | null {
  if (!usage) return null;
  const { prompt_tokens, completion_tokens, total_tokens } = usage;
  const by_model = (usage.models ?? []).map(({ cost_nano_usd, ...m }) => ({ ...m, cost_usd: usdOf(cost_nano_usd) }));
  return { prompt_tokens, completion_tokens, total_tokens, ...costOf(usage.models), by_model };
}

/** PySpur's RunResponseSchema, with its two computed fields (duration, percentage_complete). */
export function toRunResponse(
  run: RunDoc,
  tasks: TaskRecord[],
  version: WorkflowVersionDoc | null,
  providerBatches: ProviderBatchView[] | null = null,
  failedAttempts: ReadonlyMap<string, FailedAttempt[]> = new Map(),
  now = new Date(),
): RunResponse {
  const end = run.end_time ?? null;
  const completed = tasks.filter((t) => t.status === 'COMPLETED').length;
  return {
    id: run._id,
    workflow_id: run.workflow_id,
    workflow_version_id: run.workflow_version_id ?? null,
    workflow_version: version ? toVersionResponse(version) : null,
    status: run.status,
    start_time: pyDateTime(run.start_time),
    end_time: iso(end),
    initial_inputs: fromJsonText(run.initial_inputs),
    outputs: fromJsonText(run.outputs),
    tasks: tasks.map((t) => toTaskResponse(run._id, t, failedAttempts.get(t.node_id))),
    parent_run_id: run.parent_run_id ?? null,
    run_type: run.run_type,
    output_file_id: run.output_file_id ?? null,
    input_dataset_id: run.input_dataset_id ?? null,
    message: run.message ?? null,
    duration: ((end ?? now).getTime() - run.start_time.getTime()) / 1000,
    percentage_complete: percentage(run, tasks.length, completed),
    usage: usageResponse(tasks.reduce<TokenUsage | undefined>((sum, t) => addUsage(sum, t.usage), undefined)),
    rerun_of: run.rerun_of ?? null,
    rerun_from_node_id: run.rerun_from_node_id ?? null,
    trigger: run.trigger
      ? {
          kind: run.trigger.kind as RunTriggerKind,
          id: run.trigger.id,
          scheduled_time: run.trigger.scheduled_time ? run.trigger.scheduled_time.toISOString() : null,
          delivery_id: run.trigger.delivery_id ?? null,
        }
      : null,
    llm_mode:
      typeof run.mini_batch_size === 'number' ? ((run.llm_mode as LlmMode | null | undefined) ?? 'online') : null,
    provider_batches: providerBatches
      ? providerBatches.map((b) => ({ ...b, created_at: iso(b.created_at), ended_at: iso(b.ended_at) }))
      : null,
  };
}

/** Tasks completed, or for a batch parent (no tasks of its own) the dataset rows finished. */
function percentage(run: RunDoc, taskCount: number, completed: number): number {
  if (run.rows_total) return (100 * (run.rows_done ?? 0)) / run.rows_total;
  return taskCount === 0 ? 0 : (100 * completed) / taskCount;
}

/** A workflow version as PySpur answers it (alone, and pinned inside each run). */
export function toVersionResponse(doc: WorkflowVersionDoc): WorkflowVersionResponse {
  return {
    version: doc.version,
    name: doc.name,
    description: doc.description ?? null,
    definition: fromJsonText(doc.definition),
    definition_hash: doc.definition_hash,
    created_at: pyDateTime(doc.created_at),
    updated_at: pyDateTime(doc.updated_at),
  };
}
