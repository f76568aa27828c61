/** Every worker on a queue registers the same workflows and activities. */
export const DEFAULT_TASK_QUEUE = 'spur-runs';

/**
 * Where bulk work (batches, evals, RAG ingests) runs: a queue of its own beside the installation's,
 * served by every worker with slots that give way while the host is busy (temporal/spur-worker.ts),
 * so a batch cannot take the CPU that interactive runs on the main queue need.
 */
export function bulkTaskQueue(taskQueue: string): string {
  return `${taskQueue}-bulk`;
}
