import { trusted } from 'mongoose';
import type { PauseRecord, PauseResolution, ProgressSave, RunPatch, TaskRecord } from '../../engine/run-contract';
import type { ApprovalDeliveryOutcome, PauseDecision } from '../../engine/approvals';

export type { PauseRecord, PauseResolution, ProgressSave, RunPatch };

import { CANCELED_MESSAGE, type RunStatus, isFinalStatus } from '../../engine/statuses';
import { isDuplicateKeyError } from '../ids';
import { fromJsonText, toJsonText } from '../json-text';
import type { Models } from '../models';
import { HEAD_FIELDS, type RunEvents, type StoredHead } from './run-events';
import { createTaskDeltas } from './task-deltas';
import { apiKeyLabel, createUsageLedger } from '../usage-ledger';
import { countRunEnd } from './run-ends';

/** How the message of a run whose record a save could not write begins (projection.activities.ts). */
export const RECORD_REFUSED = 'The run record could not be saved';

/**
 * Writes of a run's projection. Each is idempotent, so an activity that runs twice (a retry, a
 * worker that died after writing) leaves the same documents.
 */
export function createRunProjection(models: Models, events: RunEvents) {
  const { Run, RunTasks, Pause } = models;
  const deltas = createTaskDeltas(models);
  const ledger = createUsageLedger(models);

  async function saveTasks(runId: string, records: TaskRecord[], first: boolean): Promise<void> {
    const doc = { _id: runId, tasks: toJsonText(records), updated_at: new Date() };
    if (first) {
      try {
        await RunTasks.create(doc);
        return;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err; // a retried first save: replace below
      }
    }
    await RunTasks.replaceOne({ _id: runId }, doc, { upsert: true });
  }

  /**
   * The run's fields a save sets, or null when it sets none. A final status is never overwritten:
   * checked on the run as just read, then written by `_id` alone (FerretDB v1 evaluates any other
   * filter, e.g. `status: {$nin: …}`, over every run document: 214 ms per update at 3 000 runs).
   * The workflow is the run's only writer, so nothing changes between the read and the write.
   */
  function runFields(
    current: { status: RunStatus; end_time: Date | null },
    patch: RunPatch | undefined,
  ): Record<string, unknown> | null {
    // A run shows FAILED as soon as a node fails while other branches go on: only its end makes it final.
    if (!patch || (isFinalStatus(current.status) && current.end_time)) return null;
    const set: Record<string, unknown> = { status: patch.status, message: patch.message };
    if (patch.final) {
      set.end_time = new Date();
      if (patch.final.outputsByTitle !== null) set.outputs = toJsonText(patch.final.outputsByTitle);
    }
    return set;
  }

  async function tasksOf(runId: string): Promise<TaskRecord[]> {
    const doc = await RunTasks.findById(runId).lean<{ tasks: string }>();
    return fromJsonText<TaskRecord[]>(doc?.tasks) ?? [];
  }

  /** Closes a run nobody else writes any more, and its open tasks, if it is still in one of `statuses`. */
  async function closeWithoutWorkflow(
    runId: string,
    statuses: readonly RunStatus[],
    status: 'CANCELED' | 'FAILED',
    message: string,
  ): Promise<void> {
    const current = await Run.findById(runId, { status: 1, start_time: 1, ...HEAD_FIELDS }).lean<
      { status: RunStatus; start_time?: Date } & StoredHead
    >();
    if (!current || !statuses.includes(current.status)) return;
    const tasks = await tasksOf(runId);
    const now = new Date().toISOString();
    const open = ['PENDING', 'RUNNING', 'PAUSED'];
    if (tasks.some((t) => open.includes(t.status))) {
      await saveTasks(
        runId,
        tasks.map((t) => (open.includes(t.status) ? { ...t, status, end_time: t.end_time ?? now } : t)),
        false,
      );
    }
    const endTime = new Date();
    await events.append(
      runId,
      { kind: 'closed', status, message, tasks },
      {
        fields: { status, end_time: endTime, message },
        stored: current,
        onRunUpdated: () => countRunEnd(status, current.start_time, endTime),
      },
    );
  }

  return {
    /** The tasks and pauses of deleted runs (their workflow's delete). */
    async removeTasksAndPausesOf(ids: string[]): Promise<void> {
      await models.RunTasks.deleteMany({ _id: trusted({ $in: ids }) });
      await models.Pause.deleteMany({ run_id: trusted({ $in: ids }) });
    },
    /**
     * Tasks first, then the run with its stream's head in one update: a reader that sees the run
     * final also sees its tasks final. A cancel that finds the record CANCELED already is dropped
     * whole: the api cancelled a run no worker had started, with its tasks, and the workflow leaves
     * that record as it is. The stream's events come last (with `pause`, the pause opened or
     * resolved beside this save). `onEnded`: called as soon as this save has ended the run's
     * record (before its events; a retried save finds it ended and does not call it).
     */
    async save(
      p: ProgressSave,
      pause?: { opened: PauseRecord } | { resumed: PauseResolution },
      onEnded?: () => void,
    ): Promise<void> {
      // One read serves the final-status check, a cancel's check and the stream's head; the tasks
      // are written once it has said the run has not ended.
      const cancel = p.run?.status === 'CANCELED';
      const read = Run.findById(p.runId, {
        status: 1,
        message: 1,
        start_time: 1,
        end_time: 1,
        workflow_id: 1,
        started_by: 1,
        trigger: 1,
        ...HEAD_FIELDS,
      }).lean<
        {
          status: RunStatus;
          message?: string | null;
          start_time?: Date;
          end_time: Date | null;
          workflow_id: string;
          started_by?: string | null;
          trigger?: { kind: string } | null;
        } & StoredHead
      >();
      const current = await read;
      if (!current) return; // deleted with its workflow: nothing to show any more
      if (cancel && current.status === 'CANCELED') return;
      // An ended record stays as it ended. A workflow task that ran local activities is replayed
      // whole if its worker dies before the task completes, saves and short calls included
      // (activity-options.ts, shortCallOptions): its saves find the run ended and change nothing. Only a
      // final save goes on, to write again the events of the save that ended it (events.append).
      // A record failed because a save was refused (markFailed) is not its workflow's end: saves go on
      // failing there, and end the run as they did.
      const closed =
        isFinalStatus(current.status) &&
        current.end_time !== null &&
        current.end_time !== undefined &&
        !current.message?.startsWith(RECORD_REFUSED);
      if (closed && !cancel && !p.run?.final) return;
      if (p.tasks && !closed) await saveTasks(p.runId, p.tasks.records, p.tasks.first);
      if (p.tasks && !closed)
        await ledger.record([
          { runId: p.runId, workflowId: current.workflow_id, apiKey: apiKeyLabel(current), tasks: p.tasks.records },
        ]);
      const fields = runFields(current, p.run);
      const endTime = p.run?.final !== undefined && fields?.end_time instanceof Date ? fields.end_time : undefined;
      const status = p.run?.status;
      const ended =
        endTime && status
          ? () => {
              countRunEnd(status, current.start_time, endTime);
              onEnded?.();
            }
          : undefined;
      await events.append(
        p.runId,
        { kind: 'progress', save: p, ...(pause ? { pause } : {}) },
        { fields, stored: current, ...(ended ? { onRunUpdated: ended } : {}) },
      );
      // A task that ended has streamed its last piece: the write that says so sweeps stale ones.
      if (p.run?.final || p.tasks?.records.some((t) => t.status === 'COMPLETED' || t.status === 'FAILED'))
        await deltas.sweep();
    },

    async recordPause(p: PauseRecord): Promise<void> {
      try {
        await Pause.create({
          _id: p.pauseId,
          run_id: p.runId,
          node_id: p.nodeId,
          pause_message: p.message,
          pause_time: new Date(p.pauseTime),
          resume_time: null,
          resume_user_id: null,
          resume_action: null,
          input_data: toJsonText(p.input),
          comments: null,
        });
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err; // recorded by an earlier attempt
      }
    },

    async resolvePause(r: PauseResolution): Promise<void> {
      await Pause.updateOne(
        { _id: r.pauseId },
        {
          $set: {
            resume_time: new Date(r.resumeTime),
            resume_user_id: r.userId,
            resume_action: r.action,
            comments: r.comments,
            ...(r.decisions ? { decisions: toJsonText(r.decisions) } : {}),
          },
        },
      );
    },

    /** A message with approval links was sent or given up: the run's `pause.notification` event. */
    async recordNotification(runId: string, delivery: ApprovalDeliveryOutcome): Promise<void> {
      await events.append(runId, { kind: 'notification', delivery });
    },

    /** The decisions so far on a pause still open (a quorum not reached yet): the whole list, so a retry writes the same. */
    async recordPauseDecisions(pauseId: string, decisions: PauseDecision[]): Promise<void> {
      await Pause.updateOne({ _id: pauseId, resume_time: null }, { $set: { decisions: toJsonText(decisions) } });
    },

    /**
     * The api's cancel of a run that has no workflow writing it: one no worker has picked up yet
     * (PENDING), or one whose Temporal workflow is gone (terminated or deleted outside Spur), which
     * would otherwise show RUNNING or PAUSED forever. Its open tasks are cancelled with it.
     */
    async cancelWithoutWorkflow(runId: string, statuses: readonly RunStatus[]): Promise<void> {
      await closeWithoutWorkflow(runId, statuses, 'CANCELED', CANCELED_MESSAGE);
    },

    /** The reconciler's end of a run whose workflow died without saying so (terminated, timed out, deleted). */
    async failWithoutWorkflow(runId: string, statuses: readonly RunStatus[], message: string): Promise<void> {
      await closeWithoutWorkflow(runId, statuses, 'FAILED', message);
    },

    tasksOf,
  };
}

export type RunProjection = ReturnType<typeof createRunProjection>;
