import { taskIdFor } from '../db/ids';
import type { GraphNode, RunDefinition, TaskRecord } from '../engine/run-contract';
import { TaskBook } from '../engine/task-book';

/** The nodes a run has tasks for, in definition order: the top level (a loop's children get none). */
export function topLevelNodes(definition: RunDefinition): GraphNode[] {
  return definition.nodes.filter((n) => (n.parent_id ?? null) === null);
}

/** The ids of a run's tasks (R12's third node is T12003): what its workflow's TaskBook is built with. */
export function runTaskIds(runSeq: number, topLevel: readonly Pick<GraphNode, 'id'>[]): Record<string, string> {
  return Object.fromEntries(topLevel.map((n, i) => [n.id, taskIdFor(runSeq, i, topLevel.length)]));
}

/**
 * The tasks a run's workflow starts with, every top-level node's PENDING: what a reader shows of a
 * started run before its workflow's first save. PySpur creates them as its engine schedules the
 * nodes, at the start, and its editor stops polling a run that shows it no PENDING or RUNNING task.
 */
export function openingTasks(runSeq: number, definition: RunDefinition): TaskRecord[] {
  const topLevel = topLevelNodes(definition);
  return new TaskBook(topLevel, runTaskIds(runSeq, topLevel)).snapshot();
}
