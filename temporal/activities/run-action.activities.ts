import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { fromJsonText } from '../../src/db/json-text';
import type { RunActionDoc } from '../../src/db/models';
import { type ItemOutcome, type RunActions } from '../../src/db/run-actions';
import {
  DONE_OUTCOMES,
  type RunActionDecider,
  type RunActionFinish,
  type RunActionPageInput,
  type RunActionTally,
} from '../../src/contracts/run-action-contract';
import { withRunCaller } from '../../src/runs/run-caller';
import type { RunActionPlan, RunActionSteps } from '../../src/runs/run-action-steps';

export interface RunActionActivityDeps {
  runActions: RunActions;
  runActionSteps: RunActionSteps;
}

/**
 * From this attempt of a page on, a run whose step still fails for a reason no refusal names (a
 * worker that never answers its decision, say) is failed alone with that reason, so one run cannot
 * hold up the others; before it, the page is retried and the run tried again.
 */
const GIVE_UP_ATTEMPT = 5;

function planOf(action: RunActionDoc): RunActionPlan {
  const filter = fromJsonText<{ node_id?: string }>(action.filter);
  return {
    id: action._id,
    action: action.action,
    fromNodeId: action.action === 'rerun' ? (filter?.node_id ?? null) : null,
    decider: fromJsonText<RunActionDecider>(action.decider),
  };
}

export function createRunActionActivities({ runActions, runActionSteps }: RunActionActivityDeps) {
  async function actOn(plan: RunActionPlan, runId: string, attempt: number): Promise<ItemOutcome> {
    try {
      return await runActionSteps(plan, runId);
    } catch (err) {
      if (attempt < GIVE_UP_ATTEMPT) throw err;
      return { outcome: 'failed', error: `Gave up after ${attempt} attempts: ${(err as Error).message}` };
    }
  }

  return {
    /**
     * Acts on the pending runs of one page of an action, one at a time; runs settled by an earlier
     * attempt are left as they are. Answers the page's tally and records the action's progress.
     */
    async actOnRunPage(input: RunActionPageInput): Promise<RunActionTally> {
      const ctx = Context.current();
      const action = await runActions.get(input.actionId);
      if (!action) return { done: 0, failed: 0 };
      const plan = planOf(action);
      // The new runs of a retry or rerun are started by whoever made the action.
      const starter = { id: action.started_by ?? null, name: action.started_by_name ?? null };
      const page = { done: 0, failed: 0 };
      for (const item of await runActions.itemsAt(input.actionId, input.from, input.count)) {
        let outcome = item.outcome;
        if (outcome === 'pending') {
          if (ctx.cancellationSignal.aborted) throw new CancelledFailure('The bulk action was cancelled');
          ctx.heartbeat(item.position);
          const result = await withRunCaller(starter, () => actOn(plan, item.run_id, ctx.info.attempt));
          await runActions.settle(item, result);
          outcome = result.outcome;
        }
        if (outcome === 'failed') page.failed++;
        else if (DONE_OUTCOMES.includes(outcome)) page.done++;
      }
      await runActions.progress(input.actionId, {
        done: input.before.done + page.done,
        failed: input.before.failed + page.failed,
      });
      return page;
    },

    /** The action has ended or was stopped: its status and its tally, counted from its items. */
    async finishRunAction(input: RunActionFinish): Promise<void> {
      await runActions.finish(input.actionId, input.status, await runActions.tally(input.actionId));
    },
  };
}

export type RunActionActivities = ReturnType<typeof createRunActionActivities>;
