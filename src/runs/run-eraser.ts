import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Models } from '../db/models';
import { createCallbackDeliveries } from '../db/callback-deliveries';
import { createIdempotencyKeys } from '../db/idempotency-keys';
import { createInboundCallbacks } from '../db/inbound-callbacks';
import { createOutputFiles } from '../db/output-files';
import { createReconcileSuspects } from '../db/reconcile-suspects';
import { type ExpiringRun, type RunExpiry, createRunExpiry } from '../db/runs/run-expiry';
import type { RunRepository } from '../db/runs/run-repository';
import { createSessionTurns } from '../db/session-turns';
import { createUsageLedger } from '../db/usage-ledger';
import { isFinalStatus } from '../engine/statuses';
import { ConflictError, notFound } from '../errors';
import type { Budgets } from '../usage/budgets';
import { removeUnusedRunFiles } from './files';

/** Runs deleted per step of a deletion (a batch's rows go this many at a time). */
export const ERASE_PAGE = 100;
/**
 * A run's workflow stores its final events right after the record that says it ended; events still
 * missing this long after that end will not come (the workflow was terminated in between).
 */
const WRITER_GONE_AFTER_MS = 60_000;
/** How long a delete of one run waits for its final events before answering 409. */
const END_STORED_WAIT_MS = 2_000;
/** A run is recorded moments after its files are stored: files named this recently are kept. */
const FILE_MARGIN_MS = 10 * 60_000;

export interface RunEraserDeps {
  models: Models;
  runRecords: RunRepository;
  budgets: Budgets;
  /** Keys the rollups' ids: a deleted run's usage is counted under a digest no one can turn back into its id. */
  secretKey: Buffer;
}

/**
 * Deletes finished runs with everything they own: their usage and spending (summed into rollups
 * that name no run first, so usage answers and budgets count them as before), idempotency keys,
 * chat turns, output files, the reconciler's notes, the run's own records and stored values, and
 * run files no remaining run can name. Each step can be repeated: a deletion cut short is finished
 * by the next one, and the run's record goes last so that the next one finds it.
 */
export function createRunEraser({ models, runRecords, budgets, secretKey }: RunEraserDeps) {
  const rollupKey = createHmac('sha256', secretKey).update('spur usage rollup v1').digest();
  const tagOf = (runId: string) => createHmac('sha256', rollupKey).update(runId).digest('hex').slice(0, 32);
  const ledger = createUsageLedger(models);
  const keys = createIdempotencyKeys(models);
  const turns = createSessionTurns(models);
  const outputFiles = createOutputFiles(models);
  const suspects = createReconcileSuspects(models);
  const callbacks = createCallbackDeliveries(models);
  const inboundCallbacks = createInboundCallbacks(models);
  const expiry: RunExpiry = createRunExpiry(models);

  async function eraseAll(runs: readonly ExpiringRun[]): Promise<void> {
    const ids = runs.map((r) => r._id);
    const tagged = ids.map((runId) => ({ runId, tag: tagOf(runId) }));
    await ledger.rollUp(tagged);
    await budgets.rollUpSpendOf(tagged);
    await ledger.removeOfRuns(ids);
    await keys.removeOfRuns(ids);
    await turns.removeOfRuns(ids);
    await outputFiles.removeOfRuns(ids);
    await suspects.clearAll(ids);
    await inboundCallbacks.removeOfRuns(ids);
    await runRecords.removeRuns(ids);
    for (const workflowId of new Set(runs.map((r) => r.workflow_id))) {
      const earliest = (await expiry.earliestStartOf(workflowId))?.getTime() ?? Date.now();
      await removeUnusedRunFiles(models, workflowId, new Date(Math.min(earliest, Date.now()) - FILE_MARGIN_MS));
    }
  }

  /**
   * A finished run and its children (a batch's rows), at most about `budget` runs in this call:
   * `done` once the run itself is gone; otherwise call again.
   */
  async function eraseTree(run: ExpiringRun, budget: number): Promise<{ erased: number; done: boolean }> {
    let erased = 0;
    for (;;) {
      if (erased >= budget) return { erased, done: false };
      const children = await expiry.childrenOf(run._id, budget - erased);
      if (children.length === 0) break;
      await eraseAll(children);
      erased += children.length;
    }
    await eraseAll([run]);
    return { erased: erased + 1, done: true };
  }

  /**
   * Why a finished run must wait before it goes (rows still running, a callback still being
   * delivered, its final events still being stored); null: it may go.
   */
  async function busy(runId: string): Promise<string | null> {
    if (await expiry.hasOpenChild(runId)) return 'has rows still running';
    if (await callbacks.pendingOf(runId)) return 'has a callback still being delivered';
    if (!(await endStored(runId))) return 'is still storing its final events';
    return null;
  }

  /**
   * Whether the run's workflow has stored all its end wrote: the record says the run ended before
   * the final events are inserted. Events still missing a while after the end will not come.
   */
  async function endStored(runId: string): Promise<boolean> {
    const end = (await runRecords.endOf(runId))?.end_time;
    if (!end || Date.now() - end.getTime() >= WRITER_GONE_AFTER_MS) return true;
    return runRecords.events.lastWriteStored(runId);
  }

  /** A run polled to its end and deleted at once may be a write away from its final events: a moment for them. */
  async function awaitEndStored(runId: string): Promise<void> {
    const deadline = Date.now() + END_STORED_WAIT_MS;
    while (!(await endStored(runId)) && Date.now() < deadline) await sleep(50);
  }

  return {
    expiry,
    busy,
    eraseTree,

    /** DELETE /run/{id}/: one finished run now, with its children; 409 for a run retention would not delete. */
    async eraseNow(runId: string): Promise<void> {
      const run = await runRecords.recordOf(runId);
      if (!run) throw notFound.run();
      // A run shows FAILED while its other branches go on: only its end makes it final.
      if (!isFinalStatus(run.status) || !run.end_time)
        throw new ConflictError(
          `Run ${runId} is ${run.status} and has not ended: only a finished run (COMPLETED, FAILED or CANCELED) can be deleted`,
          'RUN_NOT_FINISHED',
        );
      if (run.parent_run_id && (await runRecords.exists(run.parent_run_id)))
        throw new ConflictError(
          `Run ${runId} belongs to run ${run.parent_run_id}: it is deleted with that run`,
          'RUN_HAS_PARENT',
        );
      if (run.run_type === 'eval')
        throw new ConflictError(`Run ${runId} is an eval's batch: it is deleted with its eval`, 'RUN_OF_EVAL');
      await awaitEndStored(runId);
      const waiting = await busy(runId);
      if (waiting) throw new ConflictError(`Run ${runId} ${waiting}: delete it once that ends`, 'RUN_BUSY');
      while (!(await eraseTree(run, ERASE_PAGE)).done);
    },
  };
}

export type RunEraser = ReturnType<typeof createRunEraser>;
