import { trusted } from 'mongoose';
import { insertIgnoringDuplicates, isBusyError, isDuplicateKeyError } from '../db/ids';
import type { Models } from '../db/models';
import { settingsCache } from '../db/settings-cache';
import type { PriceBook } from './price-book';

export type BudgetAction = 'pause' | 'fail';

export interface WorkflowBudget {
  per_run_usd: number | null;
  per_day_usd: number | null;
  per_month_usd: number | null;
  on_exceed: BudgetAction;
}

/** Where a model call is made: the run and the workflow its budget belongs to. */
export interface SpendScope {
  workflowId: string;
  runId: string;
}

/** A call that would pass a budget: which one, and the amounts, in words a person can act on. */
export interface BudgetExcess {
  on_exceed: BudgetAction;
  message: string;
}

/** A model call about to go out: its model, and its worst case in tokens. */
export interface PlannedCall {
  model: string;
  promptTokens: () => Promise<number>;
  maxOutputTokens: number;
}

/**
 * What `hold` answers: the call may go (`holdId` names its hold, null when nothing was held: no
 * budget, or no price to hold by), or it would pass a budget.
 */
export type HoldOutcome = { holdId: string | null } | { excess: BudgetExcess };

const NANO = 1e9;
/** Holds raced for the same number are taken again; past this many tries the call is retried later. */
const MAX_HOLD_TRIES = 50;

const usd = (nano: number) => `$${(nano / NANO).toFixed(6).replace(/0+$/, '').replace(/\.$/, '')}`;

/**
 * Workflow budgets (`workflow_budgets`) and the spending they are measured against
 * (`spend_entries`). Before a budgeted call goes out, its worst case (the prompt's tokens plus its
 * max output tokens, at the model's price) is held: counted as spent, against what is left of the
 * run's, the UTC day's and the UTC month's budget, by every worker and api process at once. The
 * answer settles the hold to what the call cost; a call that fails unanswered releases it. A hold
 * whose worker died before the answer stays at its worst case (the call may have been paid).
 */
export function createBudgets(models: Models, prices: PriceBook, clock: () => Date = () => new Date()) {
  const { WorkflowBudget, SpendEntry } = models;
  const cache = settingsCache(models);
  async function budgetOfWorkflow(workflowId: string): Promise<WorkflowBudget | null> {
    const doc = await WorkflowBudget.findById(workflowId).lean();
    return doc ? budgetOf(doc) : null;
  }

  async function spentNano(match: Record<string, unknown>): Promise<number> {
    const [sum] = await SpendEntry.aggregate<{ nano: number }>([
      { $match: match },
      { $group: { _id: null, nano: { $sum: '$cost_nano_usd' } } },
    ]);
    return sum?.nano ?? 0;
  }

  /** The budget a call of `worstNano` would pass, on what is spent and held now; null when none. */
  async function passedBy(
    scope: SpendScope,
    budget: WorkflowBudget,
    worstNano: number,
  ): Promise<{ name: string; limitUsd: number; spentNano: number } | null> {
    const now = clock();
    const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const limits: Array<[string, number | null, Record<string, unknown>]> = [
      ['per_run_usd', budget.per_run_usd, { run_id: scope.runId }],
      ['per_day_usd', budget.per_day_usd, { workflow_id: scope.workflowId, at: { $gte: day } }],
      ['per_month_usd', budget.per_month_usd, { workflow_id: scope.workflowId, at: { $gte: month } }],
    ];
    for (const [name, limitUsd, match] of limits) {
      if (limitUsd === null) continue;
      const spent = await spentNano(match);
      if (spent + worstNano > Math.round(limitUsd * NANO)) return { name, limitUsd, spentNano: spent };
    }
    return null;
  }

  /** The number the workflow's next hold takes: one past its latest. */
  async function nextSeq(workflowId: string): Promise<number> {
    const latest = await SpendEntry.findOne({ workflow_id: workflowId, seq: trusted({ $exists: true }) }, { seq: 1 })
      .sort({ seq: -1 })
      .lean<{ seq: number }>();
    return (latest?.seq ?? 0) + 1;
  }

  /**
   * Takes number `seq` for a hold; false when another process took it first. Each try reads the
   * latest number before it reads the spending, so of two holds judged on the same reading of
   * it, only one is inserted: the other reads again, its rival's hold included.
   */
  async function insertHold(
    id: string,
    callId: string,
    scope: SpendScope,
    seq: number,
    worstNano: number,
  ): Promise<boolean> {
    try {
      await SpendEntry.create({
        _id: id,
        call_id: callId,
        workflow_id: scope.workflowId,
        run_id: scope.runId,
        cost_nano_usd: worstNano,
        at: clock(),
        seq,
        held: true,
      });
      return true;
    } catch (err) {
      if (isDuplicateKeyError(err) || isBusyError(err)) return false;
      throw err;
    }
  }

  return {
    get: budgetOfWorkflow,

    /**
     * Every budget of the workspace, with what its workflow has spent this UTC day and month
     * (calls held and not yet answered count at their worst case, as the check before a call
     * counts them).
     */
    async overview(): Promise<
      Array<{ workflowId: string; budget: WorkflowBudget; dayNano: number; monthNano: number }>
    > {
      const docs = await WorkflowBudget.find().sort({ _id: 1 }).lean();
      if (docs.length === 0) return [];
      const now = clock();
      const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
      const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
      // Two plain sums rather than one with $cond, which FerretDB does not run.
      const ids = docs.map((d) => d._id);
      const sumsSince = async (since: Date) =>
        new Map(
          (
            await SpendEntry.aggregate<{ _id: string; nano: number }>([
              { $match: { workflow_id: { $in: ids }, at: { $gte: since } } },
              { $group: { _id: '$workflow_id', nano: { $sum: '$cost_nano_usd' } } },
            ])
          ).map((s) => [s._id, s.nano]),
        );
      const [ofDay, ofMonth] = [await sumsSince(day), await sumsSince(month)];
      return docs.map((doc) => ({
        workflowId: doc._id,
        budget: budgetOf(doc),
        dayNano: ofDay.get(doc._id) ?? 0,
        monthNano: ofMonth.get(doc._id) ?? 0,
      }));
    },
    async set(workflowId: string, budget: WorkflowBudget): Promise<void> {
      await WorkflowBudget.replaceOne({ _id: workflowId }, { ...budget, updated_at: clock() }, { upsert: true });
      await cache.changed();
    },
    /** False when the workflow had none. */
    async remove(workflowId: string): Promise<boolean> {
      const { deletedCount } = await WorkflowBudget.deleteOne({ _id: workflowId });
      await cache.changed();
      return deletedCount > 0;
    },

    /**
     * Holds a call's worst case before it goes out, or says which budget it would pass. The budget
     * is kept in memory until any setting changes (settings-cache.ts): a budget set applies to
     * every call that starts a second later, in every process. `again`: this
     * call's hold was tried before and its answer lost (a dropped connection), so it may exist.
     */
    async hold(scope: SpendScope, call: PlannedCall, callId: string, again = false): Promise<HoldOutcome> {
      const budget = await cache.get('budget', scope.workflowId, () => budgetOfWorkflow(scope.workflowId));
      if (!budget) return { holdId: null };
      // A hold taken by the lost try is found, not taken twice.
      const taken = again ? await SpendEntry.findOne({ call_id: callId }, { _id: 1 }).lean() : null;
      if (taken) return { holdId: taken._id };
      const prompt = await call.promptTokens();
      const [worst] = await prices.price([
        { model: call.model, prompt_tokens: prompt, completion_tokens: call.maxOutputTokens },
      ]);
      const worstNano = worst?.cost_nano_usd;
      if (worstNano === null || worstNano === undefined) return { holdId: null };
      for (let tries = 0; tries < MAX_HOLD_TRIES; tries++) {
        const seq = await nextSeq(scope.workflowId);
        const passed = await passedBy(scope, budget, worstNano);
        if (passed)
          return {
            excess: {
              on_exceed: budget.on_exceed,
              message:
                `Budget ${passed.name} of workflow ${scope.workflowId} (${usd(passed.limitUsd * NANO)}) would be passed: ` +
                `${usd(passed.spentNano)} spent, and this ${call.model} call may cost up to ${usd(worstNano)} ` +
                `(${prompt} prompt tokens + ${call.maxOutputTokens} max output tokens)`,
            },
          };
        const id = `${scope.workflowId}#${seq}`;
        if (await insertHold(id, callId, scope, seq, worstNano)) return { holdId: id };
      }
      throw new Error(`Budget of workflow ${scope.workflowId}: ${MAX_HOLD_TRIES} holds raced this call's; try again`);
    },

    /**
     * What an answered call cost: its hold settles to it, or (no hold) an entry of its own is
     * written under `entryId`, so a retried write counts it once.
     */
    async spend(entryId: string, holdId: string | null, scope: SpendScope, costNano: number): Promise<void> {
      if (holdId) {
        await SpendEntry.updateOne({ _id: holdId }, { $set: { cost_nano_usd: costNano, held: false } });
        return;
      }
      // An insert, not an upsert: FerretDB v1 reads before every update, and a retried write's
      // entry, already there, stands as written.
      await insertIgnoringDuplicates(SpendEntry, [
        { _id: entryId, workflow_id: scope.workflowId, run_id: scope.runId, cost_nano_usd: costNano, at: clock() },
      ]);
    },

    /** A held call failed without an answer: nothing was spent. */
    async release(holdId: string): Promise<void> {
      await SpendEntry.updateOne({ _id: holdId }, { $set: { cost_nano_usd: 0, held: false } });
    },

    /**
     * Deleted runs' spending, summed per workflow and UTC day into entries that name no run
     * (`_id` `rollup:<tag>:<day>`, at the day's start), so the day's and month's budgets still count
     * it; then their own entries go. An entry already there was written by an earlier attempt from
     * all of the run's entries, so it stands.
     */
    async rollUpSpendOf(runs: readonly { runId: string; tag: string }[]): Promise<void> {
      for (const { runId, tag } of runs) {
        const days = new Map<string, { workflow_id: string; cost_nano_usd: number; at: Date }>();
        for (const entry of await SpendEntry.find({ run_id: runId }).lean()) {
          const day = entry.at.toISOString().slice(0, 10);
          const sum = days.get(day) ?? {
            workflow_id: entry.workflow_id,
            cost_nano_usd: 0,
            at: new Date(`${day}T00:00:00.000Z`),
          };
          sum.cost_nano_usd += entry.cost_nano_usd;
          days.set(day, sum);
        }
        for (const [day, sum] of days)
          await SpendEntry.create({ _id: `rollup:${tag}:${day}`, run_id: `rollup:${tag}`, ...sum }).catch(
            (err: unknown) => {
              if (!isDuplicateKeyError(err)) throw err;
            },
          );
        await SpendEntry.deleteMany({ run_id: runId });
      }
    },

    /** The workflow is deleted: its budget goes with it (its spending stays in the ledger). */
    async removeOfWorkflow(workflowId: string): Promise<void> {
      await WorkflowBudget.deleteOne({ _id: workflowId });
      await cache.changed();
    },
  };
}

export type Budgets = ReturnType<typeof createBudgets>;

/** Whether runs of the workflow may pause for its budget (its batch rows then run as workflows). */
export async function budgetMayPause(models: Models, workflowId: string): Promise<boolean> {
  return (await models.WorkflowBudget.exists({ _id: workflowId, on_exceed: 'pause' })) !== null;
}

function budgetOf(doc: {
  per_run_usd?: number | null;
  per_day_usd?: number | null;
  per_month_usd?: number | null;
  on_exceed: string;
}): WorkflowBudget {
  return {
    per_run_usd: doc.per_run_usd ?? null,
    per_day_usd: doc.per_day_usd ?? null,
    per_month_usd: doc.per_month_usd ?? null,
    on_exceed: doc.on_exceed === 'fail' ? 'fail' : 'pause',
  };
}
