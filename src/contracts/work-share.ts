import type { Priority } from '@temporalio/common';
import { bulkTaskQueue } from './task-queues';

/**
 * How a workflow's tasks share the workers. Bulk work runs on a task queue of its own, whose slots
 * give way while the host's CPU is past SPUR_BULK_TARGET_CPU (temporal/spur-worker.ts): on a busy
 * host what slows interactive runs is CPU and database time, not a queue, so bulk must leave some.
 * With SPUR_FAIR_SHARE, starts also carry Temporal's task-queue priority and fairness keys: a person
 * waiting on a run goes before a schedule's fire, and within a class workspaces take turns (the
 * fairness key is the workspace), so one workspace's batch does not take every bulk slot from
 * another's. Activities and child workflows (a batch's rows, an eval's) inherit their workflow's
 * queue and keys. The Temporal server must match by priority and fairness
 * (`matching.enableFairness`; the dev servers and deploy/ set it); a server that does not ignores
 * the keys and dispatches first come, first served.
 */
export type WorkClass = 'interactive' | 'scheduled' | 'bulk';

/** Temporal's priority keys run from 1 (first) to 5; a workflow without one is 3. */
const PRIORITY_KEY: Readonly<Record<WorkClass, number>> = { interactive: 2, scheduled: 3, bulk: 4 };

/** Where Spur's workflows start: its task queue, the installation's workflow id prefix, and whether starts carry the share's keys. */
export interface WorkQueue {
  taskQueue: string;
  workflowIdPrefix: string;
  /** SPUR_FAIR_SHARE */
  fairShare: boolean;
}

/** Start options for a workflow of `workClass` acting for `workspaceId`: its task queue, and its keys when SPUR_FAIR_SHARE is on. */
export function workShare(
  workClass: WorkClass,
  workspaceId: string | null | undefined,
  queue: Pick<WorkQueue, 'taskQueue' | 'fairShare'>,
): { taskQueue: string; priority?: Priority } {
  const taskQueue = workClass === 'bulk' ? bulkTaskQueue(queue.taskQueue) : queue.taskQueue;
  if (!queue.fairShare) return { taskQueue };
  return {
    taskQueue,
    priority: { priorityKey: PRIORITY_KEY[workClass], ...(workspaceId ? { fairnessKey: workspaceId } : {}) },
  };
}
