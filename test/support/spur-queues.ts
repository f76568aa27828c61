import { bulkTaskQueue } from '../../src/contracts/task-queues';

/** A visibility query's clause for every workflow of an installation's task queues: the main one and the bulk one. */
export const onSpurQueues = (taskQueue: string) =>
  `(TaskQueue = '${taskQueue}' OR TaskQueue = '${bulkTaskQueue(taskQueue)}')`;
