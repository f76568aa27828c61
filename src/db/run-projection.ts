import { trusted } from 'mongoose';
import type { NodeOutput, TaskWrite } from '../../temporal/shared/run-contract';
import type { PauseAction } from '../../temporal/shared/pauses';
import type { RunStatus, TaskStatus } from '../../temporal/shared/statuses';
import { toJsonText } from './json-text';
import type { Models } from './models';

export const taskKey = (runId: string, nodeId: string) => `${runId}:${nodeId}`;

export interface PlannedTask {
  nodeId: string;
  taskId: string;
  index: number;
}

const FINAL: RunStatus[] = ['COMPLETED', 'FAILED', 'CANCELED'];
export const CANCELED_MESSAGE = 'Workflow has been canceled successfully.';

export interface PauseRecord {
  runId: string;
  nodeId: string;
  pauseId: string;
  message: string;
  pauseTime: string;
  input: Record<string, unknown>;
}

export interface PauseResolution {
  runId: string;
  nodeId: string;
  pauseId: string;
  action: PauseAction;
  userId: string;
  comments: string | null;
  resumeTime: string;
  taskStatus: TaskStatus;
  output: NodeOutput | null;
  error: string | null;
}

/**
 * Writes of a run's projection. Each is idempotent, so an activity that runs twice (a retry, a
 * worker that died after writing) leaves the same documents.
 */
export function createRunProjection(models: Models) {
  const { Run, Task, Pause } = models;
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

    /** A non-final status while the run goes on (PAUSED while a pause is open, FAILED once a node failed). */
    async setStatus(runId: string, status: RunStatus, message: string | null): Promise<void> {
      await Run.updateOne({ _id: runId, status: trusted({ $nin: FINAL }) }, { $set: { status, message } });
    },

    /** The pause record and the node's PAUSED task (its pass-through output), written together. */
    async recordPause(p: PauseRecord): Promise<void> {
      await Pause.updateOne(
        { _id: p.pauseId },
        { $setOnInsert: { run_id: p.runId, node_id: p.nodeId, pause_message: p.message, pause_time: new Date(p.pauseTime), input_data: toJsonText(p.input) } },
        { upsert: true },
      );
      await Task.updateOne(
        { _id: taskKey(p.runId, p.nodeId) },
        { $set: { status: 'PAUSED', inputs: toJsonText(p.input), outputs: toJsonText(p.input), start_time: new Date(p.pauseTime), end_time: new Date(p.pauseTime) } },
      );
    },

    /** Fills the resume fields and settles the node's task (COMPLETED, or CANCELED on decline). */
    async resolvePause(r: PauseResolution): Promise<void> {
      await Pause.updateOne(
        { _id: r.pauseId },
        { $set: { resume_time: new Date(r.resumeTime), resume_user_id: r.userId, resume_action: r.action, comments: r.comments } },
      );
      await Task.updateOne(
        { _id: taskKey(r.runId, r.nodeId) },
        { $set: { status: r.taskStatus, outputs: r.output === null ? null : toJsonText(r.output), error: r.error, end_time: new Date(r.resumeTime) } },
      );
    },

    /** Cancel: every open task CANCELED, the run CANCELED with PySpur's message. */
    async cancel(runId: string): Promise<void> {
      const now = new Date();
      await Task.updateMany({ run_id: runId, status: trusted({ $in: ['PENDING', 'RUNNING', 'PAUSED'] }) }, { $set: { status: 'CANCELED', end_time: now } });
      await Run.updateOne({ _id: runId }, { $set: { status: 'CANCELED', end_time: now, message: CANCELED_MESSAGE } });
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
