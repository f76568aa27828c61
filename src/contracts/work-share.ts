import type { Priority } from '@temporalio/common';

/**
 * How a workflow's tasks share the workers, through Temporal's task-queue priority and fairness:
 * a person waiting on a run goes before bulk work, whoever's it is, and within a class workspaces
 * take turns (the fairness key is the workspace), so one workspace's 2 000-row batch neither holds
 * up another's blocking runs nor takes every bulk slot from another's batch. Activities and child
 * workflows (a batch's rows, an eval's) inherit their workflow's. The Temporal server must match by
 * priority and fairness (`matching.enableFairness`; the dev servers and deploy/ set it); a server
 * that does not ignores both and dispatches first come, first served.
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

/** Start options for a workflow of `workClass` acting for `workspaceId`; none when the share is off (SPUR_FAIR_SHARE). */
export function workShare(
  workClass: WorkClass,
  workspaceId: string | null | undefined,
  enabled: boolean,
): { priority?: Priority } {
  if (!enabled) return {};
  return { priority: { priorityKey: PRIORITY_KEY[workClass], ...(workspaceId ? { fairnessKey: workspaceId } : {}) } };
}
