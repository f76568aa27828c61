import { trusted } from 'mongoose';
import type { RunStatus } from '../../engine/statuses';
import type { Models, RunDoc } from '../models';
import { HEAD_FIELDS, type StoredHead } from './run-events';
import { createRunPauses } from './run-pauses';

/** Which runs a bulk action acts on: every field given must hold (none: every top-level run). */
export interface RunFilter {
  /** A selection: these runs only. */
  runIds?: readonly string[];
  workflowId?: string;
  statuses?: readonly RunStatus[];
  runType?: string;
  startedAfter?: Date;
  startedBefore?: Date;
  /** In the run's message (its error), ignoring case. */
  errorContains?: string;
  /** Runs whose open pause is at this node. */
  pausedAt?: string;
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The runs of the current workspace a filter matches, oldest first, at most `limit`: only
 * top-level runs (a batch's rows are acted on through their batch, whose workflow runs them).
 */
export function createRunMatches(models: Models) {
  const { Run } = models;
  const pauses = createRunPauses(models);
  const order = { start_time: 1, seq: 1 } as const;

  /**
   * The runs the query matches whose open pause is at the node, at most `limit`. A run with an open
   * pause is PAUSED: only PAUSED runs are read, with their heads, and none when the filter's
   * statuses leave PAUSED out.
   */
  async function pausedAt(
    query: Record<string, unknown>,
    statuses: readonly RunStatus[] | undefined,
    nodeId: string,
    limit: number,
  ): Promise<string[]> {
    if (statuses !== undefined && !statuses.includes('PAUSED')) return [];
    const candidates = await Run.find({ ...query, status: 'PAUSED' }, { _id: 1, ...HEAD_FIELDS })
      .sort(order)
      .lean<({ _id: string } & StoredHead)[]>();
    return (await pauses.openAt(candidates, nodeId)).slice(0, limit);
  }

  return {
    async match(filter: RunFilter, limit: number): Promise<string[]> {
      const query: Record<string, unknown> = { parent_run_id: null };
      if (filter.workflowId !== undefined) query.workflow_id = filter.workflowId;
      if (filter.statuses !== undefined) query.status = trusted({ $in: [...filter.statuses] });
      if (filter.runType !== undefined) query.run_type = filter.runType;
      if (filter.startedAfter !== undefined || filter.startedBefore !== undefined)
        query.start_time = trusted({
          ...(filter.startedAfter ? { $gte: filter.startedAfter } : {}),
          ...(filter.startedBefore ? { $lt: filter.startedBefore } : {}),
        });
      if (filter.errorContains !== undefined)
        query.message = trusted({ $regex: escapeRegex(filter.errorContains), $options: 'i' });
      if (filter.runIds !== undefined) query._id = trusted({ $in: [...new Set(filter.runIds)] });
      if (filter.pausedAt !== undefined) return pausedAt(query, filter.statuses, filter.pausedAt, limit);
      const runs = await Run.find(query, { _id: 1 }).sort(order).limit(limit).lean<Pick<RunDoc, '_id'>[]>();
      return runs.map((r) => r._id);
    },
  };
}

export type RunMatches = ReturnType<typeof createRunMatches>;
