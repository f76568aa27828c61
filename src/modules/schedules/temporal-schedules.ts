import {
  type Client,
  ScheduleNotFoundError,
  type ScheduleOptions,
  type ScheduleOverlapPolicy,
} from '@temporalio/client';
import { type Timestamp, msNumberToTs, tsToMs } from '@temporalio/common';
import type { ScheduleDoc } from '../../db/models';
import { scheduleFireWorkflowId, scheduleTemporalId } from '../../contracts/schedule-contract';
import type { ScheduledRunInput } from '../../contracts/schedule-contract';
import { WorkflowType } from '../../contracts/workflow-names';
import type { WorkQueue } from '../../contracts/work-share';
import { DEFAULT_WORKSPACE, workspaceAttribute, workspaceShare } from '../../db/workspace-scope';

const OVERLAP: Record<ScheduleDoc['overlap'], ScheduleOverlapPolicy> = {
  skip: 'SKIP',
  buffer_one: 'BUFFER_ONE',
  buffer_all: 'BUFFER_ALL',
  cancel_other: 'CANCEL_OTHER',
  allow_all: 'ALLOW_ALL',
};

/** Temporal's ListScheduleMatchingTimes answers at most this many times a call. */
const MATCHING_TIMES_PAGE = 1000;

export type ScheduleQueue = WorkQueue;

/**
 * A Spur schedule as its Temporal Schedule: Temporal keeps the time, the overlap policy and the
 * catch-up after an outage; each fire starts `spurScheduledRun`, which records and runs one run.
 */
export function temporalScheduleOf(doc: ScheduleDoc, queue: ScheduleQueue) {
  const input: ScheduledRunInput = { scheduleId: doc._id };
  const workspace = doc.workspace_id ?? DEFAULT_WORKSPACE;
  const spec = doc.cron
    ? { cronExpressions: [doc.cron], timezone: doc.timezone }
    : { intervals: [{ every: (doc.interval_seconds ?? 60) * 1000 }], timezone: doc.timezone };
  return {
    scheduleId: scheduleTemporalId(doc._id, queue.workflowIdPrefix),
    spec,
    action: {
      type: 'startWorkflow' as const,
      workflowType: WorkflowType.spurScheduledRun,
      workflowId: scheduleFireWorkflowId(doc._id, queue.workflowIdPrefix),
      args: [input],
      staticSummary: `Spur schedule ${doc._id} of workflow ${doc.workflow_id}`,
      typedSearchAttributes: workspaceAttribute(workspace),
      ...workspaceShare('scheduled', queue, workspace),
    },
    policies: { overlap: OVERLAP[doc.overlap], catchupWindow: doc.catchup_window_seconds * 1000 },
    state: { paused: doc.paused, ...(doc.note ? { note: doc.note } : {}) },
  } satisfies ScheduleOptions;
}

/** The Temporal side of schedules: create, replace, pause, remove, backfill, and the next fire times. */
export function createTemporalSchedules(temporal: () => Client, queue: ScheduleQueue) {
  const handleOf = (id: string) => temporal().schedule.getHandle(scheduleTemporalId(id, queue.workflowIdPrefix));
  return {
    async create(doc: ScheduleDoc): Promise<void> {
      await temporal().schedule.create(temporalScheduleOf(doc, queue));
    },
    async replace(doc: ScheduleDoc): Promise<void> {
      const next = temporalScheduleOf(doc, queue);
      await handleOf(doc._id).update((previous) => ({
        ...previous,
        spec: next.spec,
        action: next.action,
        policies: next.policies,
        state: { ...previous.state, ...next.state },
      }));
    },
    async setPaused(id: string, paused: boolean): Promise<void> {
      const handle = handleOf(id);
      await (paused ? handle.pause('paused through Spur') : handle.unpause('unpaused through Spur'));
    },
    /** Gone already is fine: removing is what was asked. */
    async remove(id: string): Promise<void> {
      await handleOf(id)
        .delete()
        .catch((err: unknown) => {
          if (!(err instanceof ScheduleNotFoundError)) throw err;
        });
    },
    async backfill(id: string, start: Date, end: Date, overlap: ScheduleDoc['overlap']): Promise<void> {
      await handleOf(id).backfill([{ start, end, overlap: OVERLAP[overlap] }]);
    },
    /**
     * How many fire times the schedule has after `start` up to `end`, counted by Temporal from the
     * spec it fires by (cron, time zone and daylight saving alike), up to `cap + 1`: Temporal
     * lists at most 1 000 a call, so a full page is followed by the next.
     */
    async countFireTimes(id: string, start: Date, end: Date, cap: number): Promise<number> {
      const client = temporal();
      let from = start.getTime();
      let count = 0;
      for (;;) {
        const page: { startTime?: Timestamp[] | null } = await client.workflowService.listScheduleMatchingTimes({
          namespace: client.options.namespace,
          scheduleId: scheduleTemporalId(id, queue.workflowIdPrefix),
          startTime: msNumberToTs(from),
          endTime: msNumberToTs(end.getTime()),
        });
        const times = page.startTime ?? [];
        count += times.length;
        const last = times.at(-1);
        if (count > cap || times.length < MATCHING_TIMES_PAGE || !last) return count;
        from = tsToMs(last);
      }
    },
    /** Up to five next fire times; none when paused (or when the Temporal Schedule is missing). */
    async nextTimes(id: string, paused: boolean): Promise<Date[]> {
      if (paused) return [];
      try {
        return (await handleOf(id).describe()).info.nextActionTimes.slice(0, 5);
      } catch (err) {
        if (err instanceof ScheduleNotFoundError) return [];
        throw err;
      }
    },
  };
}

export type TemporalSchedules = ReturnType<typeof createTemporalSchedules>;
