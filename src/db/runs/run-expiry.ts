import { trusted } from 'mongoose';
import { FINAL_RUN_STATUSES, OPEN_RUN_STATUSES } from '../../engine/statuses';
import type { Models, RunDoc } from '../models';

/**
 * Which runs a retention policy reaches: each group of workflows with the time before which their
 * runs expire, and the time for every other workflow (null: theirs are kept).
 */
export interface ExpiryCutoffs {
  byWorkflow: ReadonlyArray<{ workflowIds: readonly string[]; before: Date }>;
  others: Date | null;
}

/** A run retention looks at, and the fields its deletion needs. */
export type ExpiringRun = Pick<RunDoc, '_id' | 'workflow_id' | 'status' | 'workspace_id'>;

const FIELDS = { _id: 1, workflow_id: 1, status: 1, workspace_id: 1 };

/** The policy's clauses over `field` (the end of a finished run, the start of an open one). */
function reach(cutoffs: ExpiryCutoffs, field: 'end_time' | 'start_time'): Record<string, unknown>[] {
  const clauses: Record<string, unknown>[] = cutoffs.byWorkflow.map(({ workflowIds, before }) => ({
    workflow_id: trusted({ $in: workflowIds }),
    [field]: trusted({ $lt: before }),
  }));
  if (cutoffs.others !== null)
    clauses.push({
      workflow_id: trusted({ $nin: cutoffs.byWorkflow.flatMap((g) => g.workflowIds) }),
      [field]: trusted({ $lt: cutoffs.others }),
    });
  return clauses;
}

/**
 * Retention's reads of runs. It looks at runs of their own (no parent) other than an eval's batch,
 * which belongs to its eval run; a run's children (a batch's rows) go with it.
 */
export function createRunExpiry(models: Models) {
  const { Run } = models;
  const topLevel = { parent_run_id: null, run_type: trusted({ $ne: 'eval' }) };
  return {
    /** Finished runs that ended before their policy's time, in `_id` order after `after`. */
    async expiredPage(cutoffs: ExpiryCutoffs, after: string | null, limit: number): Promise<ExpiringRun[]> {
      const clauses = reach(cutoffs, 'end_time');
      if (clauses.length === 0) return [];
      const filter: Record<string, unknown> = {
        ...topLevel,
        status: trusted({ $in: FINAL_RUN_STATUSES }),
        $or: clauses,
      };
      if (after !== null) filter._id = trusted({ $gt: after });
      return Run.find(filter, FIELDS).sort({ _id: 1 }).limit(limit).lean<ExpiringRun[]>();
    },

    /** Runs still going that started before their policy's time: old enough to go, kept because they are not finished. */
    async expiredOpenCount(cutoffs: ExpiryCutoffs): Promise<number> {
      const clauses = reach(cutoffs, 'start_time');
      if (clauses.length === 0) return 0;
      return Run.countDocuments({ ...topLevel, status: trusted({ $in: OPEN_RUN_STATUSES }), $or: clauses });
    },

    /** Up to `limit` (at least 1) of a run's children, whatever their status. */
    async childrenOf(runId: string, limit: number): Promise<ExpiringRun[]> {
      return Run.find({ parent_run_id: runId }, FIELDS).limit(Math.max(1, limit)).lean<ExpiringRun[]>();
    },

    async hasOpenChild(runId: string): Promise<boolean> {
      return (await Run.exists({ parent_run_id: runId, status: trusted({ $in: OPEN_RUN_STATUSES }) })) !== null;
    },

    /** When the earliest run of the workflow still stored started (null: none is). */
    async earliestStartOf(workflowId: string): Promise<Date | null> {
      const run = await Run.findOne({ workflow_id: workflowId }, { start_time: 1 })
        .sort({ start_time: 1 })
        .lean<Pick<RunDoc, 'start_time'>>();
      return run?.start_time ?? null;
    },
  };
}

export type RunExpiry = ReturnType<typeof createRunExpiry>;
