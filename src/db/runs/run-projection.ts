import { trusted } from 'mongoose';
import type {
  KnownRecord,
  PauseRecord,
  PauseResolution,
  ProgressSave,
  RunPatch,
  SavedAs,
  TaskRecord,
} from '../../engine/run-contract';
import type { ApprovalDeliveryOutcome, PauseDecision } from '../../engine/approvals';

export type { PauseRecord, PauseResolution, ProgressSave, RunPatch };

import { CANCELED_MESSAGE, type RunStatus, isFinalStatus } from '../../engine/statuses';
import { isDuplicateKeyError } from '../ids';
import { toJsonText } from '../json-text';
import type { Models } from '../models';
import { HEAD_FIELDS, type RunEvents, type StoredHead } from './run-events';
import { createTaskDeltas } from './task-deltas';
import { apiKeyLabel, createUsageLedger } from '../usage-ledger';
import { countRunEnd } from './run-ends';
import { type TasksField, createRunTaskReads, tasksFitRun } from './run-task-reads';

/** How the message of a run whose record a save could not write begins (projection.activities.ts). */
export const RECORD_REFUSED = 'The run record could not be saved';

/**
 * Writes of a run's projection. Each is idempotent, so an activity that runs twice (a retry, a
 * worker that died after writing) leaves the same documents.
 */
export function createRunProjection(models: Models, events: RunEvents) {
  const { Run, RunTasks, Pause } = models;
  const taskReads = createRunTaskReads(models);
  const deltas = createTaskDeltas(models);
  const ledger = createUsageLedger(models);

  /**
   * Where a save's tasks go: onto the run document while the run is open and they fit (the field to
   * set in the run's update), else into `run_tasks` first and the run's own field cleared by its update.
   */
  async function placeTasks(runId: string, records: TaskRecord[], ended: boolean): Promise<{ tasks: string | null }> {
    const json = toJsonText(records);
    if (!ended && tasksFitRun(json)) return { tasks: json };
    await RunTasks.replaceOne({ _id: runId }, { _id: runId, tasks: json, updated_at: new Date() }, { upsert: true });
    return { tasks: null };
  }

  /**
   * The run's fields a save sets, or null when it sets none. A final status is never overwritten:
   * checked on the run as last read or written, then written on the stream's head seen then
   * (events.append): a writer that came between moves the head, and the save decides again.
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

  const tasksOf = (runId: string): Promise<TaskRecord[]> => taskReads.of(runId);

  /** Closes a run nobody else writes any more, and its open tasks, if it is still in one of `statuses`. */
  async function closeWithoutWorkflow(
    runId: string,
    statuses: readonly RunStatus[],
    status: 'CANCELED' | 'FAILED',
    message: string,
  ): Promise<void> {
    // A workflow that saves meanwhile moves the head: read again, and decide again on what it wrote.
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await Run.findById(runId, { status: 1, start_time: 1, tasks: 1, ...HEAD_FIELDS }).lean<
        { status: RunStatus; start_time?: Date } & TasksField & StoredHead
      >();
      if (!current || !statuses.includes(current.status)) return;
      const tasks = (await taskReads.ofDocs([current])).get(runId) ?? [];
      // Tasks first, apart as an ended run's are: a reader that sees the run closed sees its tasks
      // closed. Should the run's workflow save meanwhile, its save holds every task again
      // (TaskBook), and the close is decided anew.
      const closedTasks = await closeTasks(runId, tasks, status);
      const endTime = new Date();
      const appended = await events.append(
        runId,
        { kind: 'closed', status, message, tasks },
        {
          fields: { status, end_time: endTime, message, ...closedTasks },
          stored: current,
          onRunUpdated: () => countRunEnd(status, current.start_time, endTime),
        },
      );
      if (appended.outcome !== 'moved') return;
    }
    throw new Error(`Run ${runId}: its event head kept moving while it was closed`);
  }

  /**
   * The tasks of a run being closed, the open ones closed with it, written apart as an ended run's
   * are: the run's field to clear in its update (none when it has no tasks).
   */
  async function closeTasks(runId: string, tasks: TaskRecord[], status: RunStatus): Promise<{ tasks?: null }> {
    if (tasks.length === 0) return {};
    const now = new Date().toISOString();
    const open = ['PENDING', 'RUNNING', 'PAUSED'];
    const closed = tasks.map((t) => (open.includes(t.status) ? { ...t, status, end_time: t.end_time ?? now } : t));
    await placeTasks(runId, closed, true);
    return { tasks: null };
  }

  /** A save's fields for the run's update, or null when it sets none. */
  const updateOf = (run: Record<string, unknown> | null, tasks: { tasks?: string | null }) => {
    const fields = { ...run, ...tasks };
    return Object.keys(fields).length > 0 ? fields : null;
  };

  /** The stream's change a save makes. */
  const progressChange = (p: ProgressSave, pause?: { opened: PauseRecord } | { resumed: PauseResolution }) =>
    ({ kind: 'progress', save: p, ...(pause ? { pause } : {}) }) as const;

  /** What runs once a save's fields are written: a final status counts the run's end, then `onEnded`. */
  function endedBy(
    p: ProgressSave,
    fields: Record<string, unknown> | null,
    startTime: Date | undefined,
    onEnded: (() => void) | undefined,
  ): (() => void) | undefined {
    const endTime = p.run?.final !== undefined && fields?.end_time instanceof Date ? fields.end_time : undefined;
    const status = p.run?.status;
    if (!endTime || !status) return undefined;
    return () => {
      countRunEnd(status, startTime, endTime);
      onEnded?.();
    };
  }

  /** A task that ended has streamed its last piece: the write that says so sweeps stale ones. */
  async function sweepAfter(p: ProgressSave): Promise<void> {
    if (p.run?.final || p.tasks?.records.some((t) => t.status === 'COMPLETED' || t.status === 'FAILED'))
      await deltas.sweep();
  }

  /**
   * A save on what the workflow's last save left (the run's head, its tasks' version), with the
   * labels it was started with: no read. Tasks that fit go with the run's update; larger ones first,
   * then the run, each written only on the version the workflow knows: a save whose workflow task
   * runs again after the record ended, or that meets the api's close, writes nothing ('moved') and
   * reads instead.
   */
  async function saveOnKnownHead(
    p: ProgressSave,
    known: KnownRecord,
    pause: { opened: PauseRecord } | { resumed: PauseResolution } | undefined,
    onEnded: (() => void) | undefined,
  ): Promise<{ saved: SavedAs } | { moved: { tasksWritten: number | null } }> {
    let tasksVersion = known.tasks;
    let onRun: { tasks?: string | null } = {};
    /** The version of the tasks this save wrote apart (null: none). */
    let writtenApart: number | null = null;
    if (p.tasks) {
      const json = toJsonText(p.tasks.records);
      // On the run while it is open and they fit; once kept apart (a version known), they stay apart.
      if (known.tasks === null && !p.run?.final && tasksFitRun(json)) onRun = { tasks: json };
      else {
        const written = await saveTasksOn(p.runId, json, known.tasks);
        if (written === 'moved') return { moved: { tasksWritten: null } };
        tasksVersion = writtenApart = written;
        if (known.tasks === null) onRun = { tasks: null };
      }
      await ledger.record([
        { runId: p.runId, workflowId: known.workflowId, apiKey: known.apiKey, tasks: p.tasks.records },
      ]);
    }
    // The workflow sends what it knows only while the record is its own to end: not ended here.
    const fields = updateOf(runFields({ status: 'RUNNING', end_time: null }, p.run), onRun);
    const appended = await events.append(p.runId, progressChange(p, pause), {
      fields,
      stored: { event_head: known.head, event_head_before: null },
      onRunUpdated: endedBy(p, fields, new Date(known.startTime), onEnded),
    });
    if (appended.outcome === 'moved') return { moved: { tasksWritten: writtenApart } };
    await sweepAfter(p);
    return { saved: { head: appended.head, tasks: tasksVersion } };
  }

  /**
   * Tasks kept apart, on the version the workflow knows (null: none there yet as far as it knows,
   * so the document is created); their new version, or 'moved'.
   */
  async function saveTasksOn(runId: string, json: string, version: number | null): Promise<number | 'moved'> {
    const doc = { tasks: json, updated_at: new Date() };
    if (version === null) {
      try {
        await RunTasks.create({ _id: runId, ...doc, v: 1 });
        return 1;
      } catch (err) {
        if (isDuplicateKeyError(err)) return 'moved';
        throw err;
      }
    }
    const saved = await RunTasks.updateOne({ _id: runId, v: version }, { $set: { ...doc, v: version + 1 } });
    return saved.matchedCount === 0 ? 'moved' : version + 1;
  }

  /**
   * A save that reads the run first. `tasksWritten`: the version of the tasks kept apart that a try
   * on what the workflow knew wrote, before it found the run's head moved (null: none written).
   */
  async function saveAfterRead(
    p: ProgressSave,
    pause: { opened: PauseRecord } | { resumed: PauseResolution } | undefined,
    onEnded: (() => void) | undefined,
    tasksWritten: number | null,
  ): Promise<SavedAs> {
    for (let attempt = 0; ; attempt++) {
      // One read serves the final-status check, a cancel's check and the stream's head; the tasks
      // are written once it has said the run has not ended.
      const cancel = p.run?.status === 'CANCELED';
      const current = await Run.findById(p.runId, {
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
      if (!current) return null; // deleted with its workflow: nothing to show any more
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
      if ((closed && !cancel && !p.run?.final) || (cancel && current.status === 'CANCELED')) {
        // Tasks kept apart were written before the head said the run had ended (the api's close of a
        // run it found without tasks): the record stays as that close left it, as small tasks
        // (written with the head) do. Only while they are as written: a close's own write has no version.
        if (tasksWritten !== null) await RunTasks.deleteOne({ _id: p.runId, v: tasksWritten });
        return null;
      }
      const onRun = p.tasks && !closed ? await placeTasks(p.runId, p.tasks.records, p.run?.final !== undefined) : {};
      if (p.tasks && !closed)
        await ledger.record([
          { runId: p.runId, workflowId: current.workflow_id, apiKey: apiKeyLabel(current), tasks: p.tasks.records },
        ]);
      const fields = updateOf(runFields(current, p.run), onRun);
      const appended = await events.append(p.runId, progressChange(p, pause), {
        fields,
        stored: current,
        onRunUpdated: endedBy(p, fields, current.start_time, onEnded),
      });
      // Someone wrote between the read and the write (the api closing the run): read again.
      if (appended.outcome === 'moved') {
        if (attempt < 5) continue;
        throw new Error(`Run ${p.runId}: its event head kept moving while it was saved`);
      }
      await sweepAfter(p);
      // Its tasks' version is unknown (none written, or written without one): the next save reads.
      return { head: appended.head, tasks: null };
    }
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
     * With `p.known` (the workflow's last save left the run as it says) nothing is read first: the
     * write goes on that head, and only a head that moved since (a retried save, the api's close)
     * makes the save read the run and decide as below. Returns the run's head after the save (null:
     * unknown), for the workflow's next save.
     */
    async save(
      p: ProgressSave,
      pause?: { opened: PauseRecord } | { resumed: PauseResolution },
      onEnded?: () => void,
    ): Promise<SavedAs> {
      if (!p.known) return saveAfterRead(p, pause, onEnded, null);
      const onKnown = await saveOnKnownHead(p, p.known, pause, onEnded);
      return 'saved' in onKnown ? onKnown.saved : saveAfterRead(p, pause, onEnded, onKnown.moved.tasksWritten);
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
