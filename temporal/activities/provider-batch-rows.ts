import type { DryRun } from '../../src/engine/dry-run';
import type { RowMemo } from '../../src/db/provider-batch-records';
import { BATCHED_NODE_TYPE, type BatchAnswer } from '../../src/engine/provider-batch-plan';
import type { BudgetScope, ExecuteNodeResult, GraphNode } from '../../src/engine/run-contract';
import { type RowExecute, executeWithRetries } from './batch-row';
import { type NodeActivityDeps, executeNode } from './execute-node.activity';
import { providerBatchSeam } from './provider-batch-seam';

/** Thrown at a node whose model call waits for its provider batch: the row goes on next round. */
export class RowHeld extends Error {
  constructor(nodeId: string) {
    super(`Node ${nodeId} waits for its provider batch`);
    this.name = 'RowHeld';
  }
}

/**
 * How a row's nodes execute in a provider-batch round. A node that completed in an earlier round
 * hands on what it returned then (never runs twice). A SingleLLMCallNode without an answer holds its
 * request for the node's provider batch (the row stops there, other branches go on); with one, the
 * answer is its reply, priced at the batch rate; a failed request, or an answer the node could
 * not use, is tried online once. `memo` is updated in place; `held()` says whether the row waits.
 */
export function providerBatchExecutor(
  deps: NodeActivityDeps,
  runId: string,
  budget: BudgetScope,
  memo: RowMemo,
  signal: AbortSignal,
  dryRun?: DryRun,
): { execute: RowExecute; held(): boolean } {
  const dry = dryRun ? { dryRun } : {};
  let held = false;
  const callOnce = async (node: GraphNode, input: Record<string, unknown>, answer: BatchAnswer | undefined) => {
    const seam = providerBatchSeam(deps.fetch, answer);
    const nodeDeps = { ...deps, fetch: seam.fetch, prices: seam.prices(deps.prices), streamsText: false };
    try {
      return await executeNode(nodeDeps, { runId, node, input, budget, ...dry });
    } catch (err) {
      const body = seam.held();
      if (!body) throw err;
      memo.held[node.id] = body;
      held = true;
      throw new RowHeld(node.id);
    }
  };
  const execute: RowExecute = async (node, input) => {
    const done = memo.done[node.id];
    if (done) return done;
    let result: ExecuteNodeResult;
    if (node.node_type !== BATCHED_NODE_TYPE)
      result = await executeWithRetries(deps, runId, budget, node, input, signal, dryRun);
    else {
      const answer = memo.answers[node.id];
      try {
        result = await callOnce(node, input, answer);
      } catch (err) {
        if (!answer?.ok) throw err;
        // The batch's answer did not make an output (a reply the node refused): once online.
        result = await callOnce(node, input, { ok: false, error: 'retried online' });
      }
    }
    memo.done[node.id] = result;
    return result;
  };
  return { execute, held: () => held };
}
