import type { NodeOutput, TaskRecord } from '../engine/run-contract';
import type { TaskDryRun } from '../engine/dry-run';
import { taskOutputsById } from '../engine/task-book';
import { createRunLookups } from './runs/run-lookups';
import { createRunTaskReads } from './runs/run-task-reads';
import type { Models } from './models';
import { isFinalStatus } from '../engine/statuses';

/** Model usage of a run or a judge call; cost null once any call had no known price. */
export interface UsageSum {
  prompt_tokens: number;
  completion_tokens: number;
  cost_nano_usd: number | null;
}

export interface EndedRowRun {
  runId: string;
  status: string;
  message: string | null;
  /** Node outputs by node id (large values still by reference). */
  outputsById: Record<string, NodeOutput>;
  usage: UsageSum;
  /** Its nodes that would have acted, and what each would have sent (a dry run). */
  dryRun: Array<{ node_id: string } & TaskDryRun>;
}

export function usageOfTasks(tasks: readonly TaskRecord[]): UsageSum {
  const sum: UsageSum = { prompt_tokens: 0, completion_tokens: 0, cost_nano_usd: 0 };
  for (const model of tasks.flatMap((t) => t.usage?.models ?? [])) {
    sum.prompt_tokens += model.prompt_tokens;
    sum.completion_tokens += model.completion_tokens;
    sum.cost_nano_usd =
      sum.cost_nano_usd === null || model.cost_nano_usd === null || model.cost_nano_usd === undefined
        ? null
        : sum.cost_nano_usd + model.cost_nano_usd;
  }
  return sum;
}

/**
 * The row runs among `runIds` that have ended: a final status and an end time (a run shows FAILED
 * while other branches still run; only its end makes it final). Two reads, whatever the count.
 */
export async function endedRowRuns(models: Models, runIds: string[]): Promise<EndedRowRun[]> {
  if (runIds.length === 0) return [];
  const runs = await createRunLookups(models).standingOf(runIds);
  const ended = runs.filter((r) => isFinalStatus(r.status) && r.end_time);
  if (ended.length === 0) return [];
  const byId = await createRunTaskReads(models).ofIds(ended.map((r) => r._id));
  return ended.map((r) => {
    const records = byId.get(r._id) ?? [];
    return {
      runId: r._id,
      status: r.status,
      message: r.message ?? null,
      outputsById: taskOutputsById(records),
      usage: usageOfTasks(records),
      dryRun: records.flatMap((t) => (t.dry_run ? [{ node_id: t.node_id, ...t.dry_run }] : [])),
    };
  });
}
