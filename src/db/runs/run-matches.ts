import { trusted } from 'mongoose';
import type { RunStatus } from '../../engine/statuses';
import type { Models, PauseDoc, RunDoc } from '../models';

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
  const { Run, Pause } = models;

  async function pausedAt(nodeId: string): Promise<string[]> {
    const open = await Pause.find({ node_id: nodeId, resume_time: null }, { run_id: 1 }).lean<
      Pick<PauseDoc, 'run_id'>[]
    >();
    return [...new Set(open.map((p) => p.run_id))];
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
      let ids = filter.runIds === undefined ? undefined : [...new Set(filter.runIds)];
      if (filter.pausedAt !== undefined) {
        const open = new Set(await pausedAt(filter.pausedAt));
        ids = ids === undefined ? [...open] : ids.filter((id) => open.has(id));
      }
      if (ids !== undefined) query._id = trusted({ $in: ids });
      const runs = await Run.find(query, { _id: 1 })
        .sort({ start_time: 1, seq: 1 })
        .limit(limit)
        .lean<Pick<RunDoc, '_id'>[]>();
      return runs.map((r) => r._id);
    },
  };
}

export type RunMatches = ReturnType<typeof createRunMatches>;
