import type { Models } from '../db/models';
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

const NANO = 1e9;

const usd = (nano: number) => `$${(nano / NANO).toFixed(6).replace(/0+$/, '').replace(/\.$/, '')}`;

/**
 * Workflow budgets (`workflow_budgets`) and the spending they are measured against
 * (`spend_entries`, one per node execution that called a model, written as it ends). A call is
 * checked before it is made: its worst case (the prompt's tokens plus its max output tokens, at
 * the model's price) against what is left of the run's, the UTC day's and the UTC month's budget.
 */
export function createBudgets(models: Models, prices: PriceBook, clock: () => Date = () => new Date()) {
  const { WorkflowBudget, SpendEntry } = models;
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

  return {
    get: budgetOfWorkflow,
    async set(workflowId: string, budget: WorkflowBudget): Promise<void> {
      await WorkflowBudget.replaceOne({ _id: workflowId }, { ...budget, updated_at: clock() }, { upsert: true });
    },
    /** False when the workflow had none. */
    async remove(workflowId: string): Promise<boolean> {
      return (await WorkflowBudget.deleteOne({ _id: workflowId })).deletedCount > 0;
    },

    /** Null: the call fits (or the workflow has no budget, or the model no price to check by). */
    async check(
      scope: SpendScope,
      call: { model: string; promptTokens: () => Promise<number>; maxOutputTokens: number },
    ): Promise<BudgetExcess | null> {
      // Read at every call (one lookup by id, beside a model request): a budget applies from the moment it is set.
      const budget = await budgetOfWorkflow(scope.workflowId);
      if (!budget) return null;
      const prompt = await call.promptTokens();
      const [worst] = await prices.price([
        { model: call.model, prompt_tokens: prompt, completion_tokens: call.maxOutputTokens },
      ]);
      const worstNano = worst?.cost_nano_usd;
      if (worstNano === null || worstNano === undefined) return null;
      const now = clock();
      const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
      const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
      const limits: Array<[string, number | null, () => Promise<number>]> = [
        ['per_run_usd', budget.per_run_usd, () => spentNano({ run_id: scope.runId })],
        ['per_day_usd', budget.per_day_usd, () => spentNano({ workflow_id: scope.workflowId, at: { $gte: day } })],
        [
          'per_month_usd',
          budget.per_month_usd,
          () => spentNano({ workflow_id: scope.workflowId, at: { $gte: month } }),
        ],
      ];
      for (const [name, limitUsd, spent] of limits) {
        if (limitUsd === null) continue;
        const spentSoFar = await spent();
        if (spentSoFar + worstNano <= Math.round(limitUsd * NANO)) continue;
        return {
          on_exceed: budget.on_exceed,
          message:
            `Budget ${name} of workflow ${scope.workflowId} (${usd(limitUsd * NANO)}) would be passed: ` +
            `${usd(spentSoFar)} spent, and this ${call.model} call may cost up to ${usd(worstNano)} ` +
            `(${prompt} prompt tokens + ${call.maxOutputTokens} max output tokens)`,
        };
      }
      return null;
    },

    /** The workflow is deleted: its budget goes with it (its spending stays in the ledger). */
    async removeOfWorkflow(workflowId: string): Promise<void> {
      await WorkflowBudget.deleteOne({ _id: workflowId });
    },
    /** Records a node execution's spending once, whatever retries the write. */
    async record(entryId: string, scope: SpendScope, costNano: number): Promise<void> {
      await SpendEntry.updateOne(
        { _id: entryId },
        {
          $setOnInsert: { workflow_id: scope.workflowId, run_id: scope.runId, cost_nano_usd: costNano, at: clock() },
        },
        { upsert: true },
      );
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
