import { trusted } from 'mongoose';
import type { Models } from '../db/models';
import type { ExpiryCutoffs } from '../db/runs/run-expiry';
import { DEFAULT_WORKSPACE, workspaceScope } from '../db/workspace-scope';
import type { RetentionPageInput, RetentionPageResult, RetentionTally } from '../contracts/retention-contract';
import { ERASE_PAGE, type RunEraser } from './run-eraser';

const DAY_MS = 86_400_000;

export interface RetentionDeps {
  models: Models;
  eraser: RunEraser;
  /** SPUR_RUN_RETENTION_DAYS: days for workflows that set none; null: their runs are kept. */
  defaultDays: number | null;
}

/**
 * Run retention: a finished run is deleted (src/runs/run-eraser.ts) once it ended longer ago than
 * its workflow's retention (`run_retention_days`, else the installation's). Read in the current
 * workspace, or across all of them where none is entered (the schedule's pass), each run then
 * deleted inside its own.
 */
export function createRetention({ models, eraser, defaultDays }: RetentionDeps) {
  /** The policy as of `now`; null when no workflow's runs expire. */
  async function cutoffs(now: number): Promise<ExpiryCutoffs | null> {
    const set = await models.Workflow.find(
      { run_retention_days: trusted({ $ne: null }) },
      { _id: 1, run_retention_days: 1 },
    ).lean<Array<{ _id: string; run_retention_days: number }>>();
    const byDays = new Map<number, string[]>();
    for (const wf of set) byDays.set(wf.run_retention_days, [...(byDays.get(wf.run_retention_days) ?? []), wf._id]);
    if (byDays.size === 0 && defaultDays === null) return null;
    const before = (days: number) => new Date(now - days * DAY_MS);
    return {
      byWorkflow: [...byDays].map(([days, workflowIds]) => ({ workflowIds, before: before(days) })),
      others: defaultDays === null ? null : before(defaultDays),
    };
  }

  /** Runs old enough to go that are still going (pending, running or paused): kept. */
  async function keptActive(now = Date.now()): Promise<number> {
    const policy = await cutoffs(now);
    return policy ? eraser.expiry.expiredOpenCount(policy) : 0;
  }

  /**
   * One bounded page of the pass: expired runs after `after`, deleted with their children until
   * about `pageSize` runs went. A finished run still at work (a batch whose rows run, a callback
   * being delivered) is kept, and counted with the runs still going.
   */
  async function prunePage({ after, pageSize }: RetentionPageInput, now = Date.now()): Promise<RetentionPageResult> {
    const result: RetentionPageResult = { deleted_runs: 0, kept_active: 0, next: null };
    const policy = await cutoffs(now);
    if (!policy) return result;
    const runs = await eraser.expiry.expiredPage(policy, after, pageSize);
    let cursor = after;
    for (const run of runs) {
      const erased = await workspaceScope.run(run.workspace_id ?? DEFAULT_WORKSPACE, async () =>
        (await eraser.busy(run._id)) ? null : eraser.eraseTree(run, pageSize - result.deleted_runs),
      );
      if (erased === null) result.kept_active++;
      else result.deleted_runs += erased.erased;
      // A batch cut short is taken up again by the next page.
      if (erased && !erased.done) return { ...result, next: cursor };
      cursor = run._id;
      if (result.deleted_runs >= pageSize) return { ...result, next: cursor };
    }
    return { ...result, next: runs.length < pageSize ? null : cursor };
  }

  return {
    /** Days for workflows that set none (null: kept forever). */
    defaultDays,
    keptActive,
    prunePage,

    /** A whole pass now, page after page (POST /runs/retention/prune/; the schedule's workflow pages the same way). */
    async pass(pageSize = ERASE_PAGE): Promise<RetentionTally> {
      const now = Date.now();
      const tally: RetentionTally = { deleted_runs: 0, kept_active: await keptActive(now) };
      let after: string | null = null;
      do {
        const page = await prunePage({ after, pageSize }, now);
        tally.deleted_runs += page.deleted_runs;
        tally.kept_active += page.kept_active;
        after = page.next;
      } while (after !== null);
      return tally;
    },
  };
}

export type Retention = ReturnType<typeof createRetention>;
