import { ApplicationFailure } from '@temporalio/workflow';
import type { BudgetScope, GraphNode } from '../../src/engine/run-contract';
import { FailureType, applicationCause } from '../../src/contracts/failures';
import type { PauseActionRequest } from '../../src/contracts/pauses';

/** Pauses the run at the node, with the budget's message, until a person decides. */
export type BudgetPause = (
  node: GraphNode,
  input: Record<string, unknown>,
  message: string,
) => Promise<PauseActionRequest>;

/** The message of a call refused by its workflow's budget (on_exceed: pause), if that is what failed. */
function budgetRefusal(err: unknown): string | undefined {
  const cause = applicationCause(err);
  return cause?.type === FailureType.BudgetExceeded ? cause.message : undefined;
}

/**
 * A node's model calls under its workflow's budget: a call that would pass it pauses the run at
 * the node (like a HumanInterventionNode); APPROVE (or OVERRIDE) runs the node again with this
 * one passing allowed, DECLINE fails the node. Without a way to pause, the refusal fails the node.
 */
export async function withBudget<T>(
  node: GraphNode,
  input: Record<string, unknown>,
  workflowId: string | undefined,
  pause: BudgetPause | undefined,
  call: (budget?: BudgetScope) => Promise<T>,
): Promise<T> {
  let overBudget = false;
  for (;;) {
    try {
      return await call(workflowId ? { workflowId, ...(overBudget ? { overBudget } : {}) } : undefined);
    } catch (err) {
      const message = budgetRefusal(err);
      if (message === undefined || !pause) throw err;
      const decision = await pause(node, input, message);
      if (decision.action === 'DECLINE')
        throw ApplicationFailure.nonRetryable(`${message}; declined by ${decision.userId}`, FailureType.NodeFailed);
      overBudget = true;
    }
  }
}
