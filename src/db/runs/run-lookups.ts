import { trusted } from 'mongoose';
import type { RunStatus } from '../../engine/statuses';
import type { Models, RunDoc } from '../models';
import type { StoredCallback } from './run-documents';
import { workspaceScope } from '../workspace-scope';
import type { TaskRecord } from '../../engine/run-contract';
import { type TasksField, createRunTaskReads } from './run-task-reads';
import { createRunPauses } from './run-pauses';

/** A run in a trigger's list of recent runs. */
export type TriggeredRun = Pick<RunDoc, '_id' | 'status' | 'start_time' | 'trigger'>;

/**
 * Reads of run records by whoever needs one field of a run (its workflow, status, callback) or a
 * slice of them: the reads stay beside the writes (run-repository.ts composes these), so the
 * record's shape is known in one folder. The api's answers go through src/runs/reader.ts.
 */
export function createRunLookups(models: Models) {
  const { Run } = models;
  const taskReads = createRunTaskReads(models);
  const pauses = createRunPauses(models);
  return {
    async recordOf(runId: string): Promise<RunDoc | null> {
      return Run.findById(runId).lean<RunDoc>();
    },

    /** A run's open pauses, oldest first. */
    openPausesOf: pauses.openOf,
    /** One page of a run's pauses, newest first. */
    pausePageOf: pauses.pageOf,

    /** Paused runs, newest first: the pause inbox's page. */
    async pausedPage(skip: number, limit: number): Promise<RunDoc[]> {
      return Run.find({ status: 'PAUSED' }).sort({ start_time: -1, seq: -1 }).skip(skip).limit(limit).lean<RunDoc[]>();
    },

    /** Runs paused for a person in every workspace: the fleet's pause inbox, counted (spur_pauses_open). */
    async pausedCount(): Promise<number> {
      return workspaceScope.unscoped(() => Run.countDocuments({ status: 'PAUSED' }));
    },

    /**
     * A workflow's top-level runs in `statuses` (started in [after, before) and of `runType`, where
     * given), newest first, at most `limit`: their ids and initial inputs (a suite made from runs).
     */
    async topLevelRunsOf(
      workflowId: string,
      filter: { statuses: readonly RunStatus[]; after?: Date; before?: Date; runType?: string; limit: number },
    ): Promise<Pick<RunDoc, '_id' | 'initial_inputs'>[]> {
      const query: Record<string, unknown> = {
        workflow_id: workflowId,
        status: trusted({ $in: [...filter.statuses] }),
        parent_run_id: null,
      };
      if (filter.after || filter.before)
        query.start_time = trusted({
          ...(filter.after ? { $gte: filter.after } : {}),
          ...(filter.before ? { $lt: filter.before } : {}),
        });
      if (filter.runType !== undefined) query.run_type = filter.runType;
      return Run.find(query, { initial_inputs: 1 })
        .sort({ start_time: -1 })
        .limit(filter.limit)
        .lean<Pick<RunDoc, '_id' | 'initial_inputs'>[]>();
    },

    /** The tasks of runs already read with their `tasks` field: only those kept apart cost a read. */
    tasksIn(runs: readonly TasksField[]): Promise<Map<string, TaskRecord[]>> {
      return taskReads.ofDocs(runs);
    },

    /** The tasks of several runs at once, by run id (a run without tasks is left out). */
    async tasksOfMany(runIds: readonly string[]): Promise<Map<string, TaskRecord[]>> {
      return taskReads.ofIds(runIds);
    },

    async exists(runId: string): Promise<boolean> {
      return (await Run.exists({ _id: runId })) !== null;
    },

    async statusOf(runId: string): Promise<RunStatus | null> {
      return (await Run.findById(runId, { status: 1 }).lean<Pick<RunDoc, 'status'>>())?.status ?? null;
    },

    /** Its status and end time: a run shows FAILED while other branches go on; only its end makes it final. */
    async endOf(runId: string): Promise<Pick<RunDoc, 'status' | 'end_time'> | null> {
      return Run.findById(runId, { status: 1, end_time: 1 }).lean<Pick<RunDoc, 'status' | 'end_time'>>();
    },

    async workflowOf(runId: string): Promise<string | null> {
      return (await Run.findById(runId, { workflow_id: 1 }).lean<Pick<RunDoc, 'workflow_id'>>())?.workflow_id ?? null;
    },

    async seqOf(runId: string): Promise<number | null> {
      return (await Run.findById(runId, { seq: 1 }).lean<Pick<RunDoc, 'seq'>>())?.seq ?? null;
    },

    async callbackOf(runId: string): Promise<StoredCallback | null> {
      const run = await Run.findById(runId, { callback: 1 }).lean<Pick<RunDoc, 'callback'>>();
      return (run?.callback as StoredCallback | null | undefined) ?? null;
    },

    /** The run a schedule's fire recorded, by the fire's key: a retried recording finds it. */
    async recordOfTrigger(key: string): Promise<RunDoc | null> {
      return Run.findOne({ 'trigger.key': key }).lean<RunDoc>();
    },

    /**
     * A run and the runs above it (parent first, then its parent…), at most `max` of them: the
     * chain a SubworkflowNode's child would extend (its depth, and the workflows already on it).
     */
    async ancestryOf(runId: string, max: number): Promise<Array<Pick<RunDoc, '_id' | 'workflow_id'>>> {
      const chain: Array<Pick<RunDoc, '_id' | 'workflow_id'>> = [];
      for (let id: string | null = runId; id !== null && chain.length < max;) {
        const run: Pick<RunDoc, '_id' | 'workflow_id' | 'parent_run_id'> | null = await Run.findById(id, {
          workflow_id: 1,
          parent_run_id: 1,
        }).lean<Pick<RunDoc, '_id' | 'workflow_id' | 'parent_run_id'>>();
        if (!run) break;
        chain.push({ _id: run._id, workflow_id: run.workflow_id });
        id = run.parent_run_id ?? null;
      }
      return chain;
    },

    /** The newest runs a schedule or webhook trigger started. */
    async recentOfTrigger(triggerId: string, limit: number): Promise<TriggeredRun[]> {
      return Run.find({ 'trigger.id': triggerId }, { _id: 1, status: 1, start_time: 1, trigger: 1 })
        .sort({ start_time: -1 })
        .limit(limit)
        .lean<TriggeredRun[]>();
    },

    /** How the runs among `runIds` stand (one read, whatever the count). */
    async standingOf(runIds: string[]): Promise<Array<Pick<RunDoc, '_id' | 'status' | 'message' | 'end_time'>>> {
      if (runIds.length === 0) return [];
      return Run.find({ _id: trusted({ $in: runIds }) }, { status: 1, message: 1, end_time: 1 }).lean<
        Array<Pick<RunDoc, '_id' | 'status' | 'message' | 'end_time'>>
      >();
    },

    /** A workflow's runs in `statuses` (its delete stops the open ones first): their ids and statuses. */
    async ofWorkflowIn(
      workflowId: string,
      statuses: readonly RunStatus[],
    ): Promise<Array<Pick<RunDoc, '_id' | 'status'>>> {
      return Run.find({ workflow_id: workflowId, status: trusted({ $in: statuses }) }, { _id: 1, status: 1 }).lean<
        Array<Pick<RunDoc, '_id' | 'status'>>
      >();
    },

    /**
     * One page of the runs still open (by status) that started before `startedBefore`, in `_id`
     * order after `after`: FerretDB v1 scans for a status filter, so the reconciler reads bounded pages.
     */
    async openPage(statuses: readonly RunStatus[], startedBefore: Date, after: string | null, limit: number) {
      const filter: Record<string, unknown> = {
        status: trusted({ $in: statuses }),
        start_time: trusted({ $lt: startedBefore }),
      };
      if (after !== null) filter._id = trusted({ $gt: after });
      return Run.find(filter).sort({ _id: 1 }).limit(limit).lean<RunDoc[]>();
    },
  };
}

export type RunLookups = ReturnType<typeof createRunLookups>;
