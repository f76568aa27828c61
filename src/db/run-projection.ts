import { trusted } from 'mongoose';
import type { NodeOutput, TaskWrite } from '../../temporal/shared/run-contract';
import type { RunStatus } from '../../temporal/shared/statuses';
import { toJsonText } from './json-text';
import type { Models } from './models';

export const taskKey = (runId: string, nodeId: string) => `${runId}:${nodeId}`;

export interface PlannedTask {
  nodeId: string;
  taskId: string;
  index: number;
}

const FINAL: RunStatus[] = ['COMPLETED', 'FAILED', 'CANCELED'];

/**
 * Writes of a run's projection. Each is idempotent, so an activity that runs twice (a retry, a
 * worker that died after writing) leaves the same documents.
 */
export function createRunProjection(models: Models) {
  const { Run, Task } = models;
  return {
    /** PENDING → RUNNING, and a PENDING task per top-level node so progress has its denominator. */
    async start(runId: string, tasks: PlannedTask[]): Promise<void> {
      await Promise.all(
        tasks.map((t) =>
          Task.updateOne(
            { _id: taskKey(runId, t.nodeId) },
            { $setOnInsert: { id: t.taskId, run_id: runId, node_id: t.nodeId, index: t.index, status: 'PENDING' } },
            { upsert: true },
          ),
        ),
      );
      await Run.updateOne({ _id: runId, status: 'PENDING' }, { $set: { status: 'RUNNING' } });
    },

    async writeTasks(runId: string, writes: TaskWrite[]): Promise<void> {
      await Promise.all(writes.map((w) => Task.updateOne({ _id: taskKey(runId, w.nodeId) }, { $set: taskFields(w) })));
    },

    /** The run shows FAILED as soon as one node failed; other branches keep running. */
    async markFailed(runId: string, message: string): Promise<void> {
      // trusted(): sanitizeFilter would otherwise turn this server-built operator into a literal.
      await Run.updateOne({ _id: runId, status: trusted({ $nin: FINAL }) }, { $set: { status: 'FAILED', message } });
    },

    async finish(runId: string, status: RunStatus, message: string | null, outputsByTitle: Record<string, NodeOutput>): Promise<void> {
      await Run.updateOne({ _id: runId }, { $set: { status, message, end_time: new Date(), outputs: toJsonText(outputsByTitle) } });
    },
  };
}

export type RunProjection = ReturnType<typeof createRunProjection>;

function taskFields(w: TaskWrite): Record<string, unknown> {
  const set: Record<string, unknown> = { status: w.status };
  if (w.inputs !== undefined) set.inputs = w.inputs === null ? null : toJsonText(w.inputs);
  if (w.outputs !== undefined) set.outputs = w.outputs === null ? null : toJsonText(w.outputs);
  if (w.error !== undefined) set.error = w.error;
  if (w.startTime !== undefined) set.start_time = w.startTime === null ? null : new Date(w.startTime);
  if (w.endTime !== undefined) set.end_time = w.endTime === null ? null : new Date(w.endTime);
  if (w.subworkflowOutput !== undefined) set.subworkflow_output = w.subworkflowOutput === null ? null : toJsonText(w.subworkflowOutput);
  return set;
}
