import { ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import type { DryRun } from '../../src/engine/dry-run';
import type { GraphLevel } from '../../src/engine/graph';
import { GraphWalker, collectOutputs, nodeFailureMessage } from '../../src/engine/graph-walker';
import { PURE_NODE_TYPES } from '../../src/engine/node-kinds';
import { nodeAttempts, nodeRetryDelayMs } from '../../src/engine/node-retries';
import type { EndedRow } from '../../src/db/runs/run-repository';
import type { BudgetScope, ExecuteNodeResult, GraphNode, NodeOutput } from '../../src/engine/run-contract';
import { CANCELED_MESSAGE } from '../../src/engine/statuses';
import { TaskBook } from '../../src/engine/task-book';
import { type NodeActivityDeps, executeNode } from './execute-node.activity';
import { createAgentActivities } from './agent-step.activity';
import { AGENT_STEP_ACTIVITY } from '../../src/contracts/run-contract';
import { failureOutcomeOf } from '../../src/contracts/breaker-contract';

/** A batch row run to its end inside the chunk activity: what its run record will show. */
export type RowRun = Omit<EndedRow, 'initialInputs'> & { outputsById: Record<string, NodeOutput> };

/** How a row's nodes execute (by default each as its activity would, retries included). */
export type RowExecute = (node: GraphNode, input: Record<string, unknown>) => Promise<ExecuteNodeResult>;

/** What a row runs with: its run's ids and input. */
export interface RowRunInput {
  runId: string;
  workflowId: string;
  taskIds: Record<string, string>;
  inputNodeInput: Record<string, unknown>;
}

/** A row has no workflow of its own to pause: a budget's pause fails the row (rows that may pause run as workflows). */
export const rowBudget = (run: Pick<RowRunInput, 'workflowId'>): BudgetScope => ({ workflowId: run.workflowId });

/**
 * Runs one row's graph in this process with the engine's own walker, so a row behaves exactly as
 * a `spurRun` of the same input would (failures, routes, upstream cancels, loops). Nodes are
 * tried as often as their activity would be; a cancel of the chunk ends the row CANCELED.
 */
export async function runRowInProcess(
  deps: NodeActivityDeps,
  level: GraphLevel,
  run: RowRunInput,
  signal: AbortSignal,
  execute?: RowExecute,
): Promise<RowRun> {
  const startTime = new Date();
  const tasks = new TaskBook(level.nodes, run.taskIds);
  const budget = rowBudget(run);
  let firstFailure: string | null = null;
  const walker = new GraphWalker(
    run.runId,
    {
      recordTask: (write) => tasks.apply(write),
      onNodeFailed: (node, error) => (firstFailure ??= nodeFailureMessage(node, error)),
    },
    {
      execute: execute ?? ((node, input) => executeWithRetries(deps, run.runId, budget, node, input, signal)),
      agentStep: (input) => createAgentActivities(deps)[AGENT_STEP_ACTIVITY]({ ...input, budget }),
      isCancellation: (err) => signal.aborted || err instanceof CancelledFailure,
      providerFailure: failureOutcomeOf,
    },
  );
  const finish = (
    status: RowRun['status'],
    message: string | null,
    outputs: ReturnType<typeof collectOutputs>,
  ): RowRun => ({
    runId: run.runId,
    status,
    message,
    tasks: tasks.take(),
    outputsById: outputs.byId,
    outputsByTitle: outputs.byTitle,
    startTime,
    endTime: new Date(),
  });
  try {
    const states = await walker.runLevel(level, run.inputNodeInput, true);
    return finish(firstFailure === null ? 'COMPLETED' : 'FAILED', firstFailure, collectOutputs(level, states));
  } catch (err) {
    if (!signal.aborted) throw err;
    tasks.cancelOpen(new Date().toISOString());
    return finish('CANCELED', CANCELED_MESSAGE, { byId: {}, byTitle: {} });
  }
}

/**
 * A row that throws (a bug, an input the engine cannot take) fails alone instead of failing the
 * chunk, which would be retried into the same row forever.
 */
export async function runRowOrFail(
  deps: NodeActivityDeps,
  level: GraphLevel,
  run: RowRunInput,
  signal: AbortSignal,
  execute?: RowExecute,
): Promise<RowRun> {
  const startTime = new Date();
  try {
    return await runRowInProcess(deps, level, run, signal, execute);
  } catch (err) {
    if (signal.aborted) throw err;
    return {
      runId: run.runId,
      status: 'FAILED',
      message: `The row could not run: ${(err as Error).message}`,
      tasks: [],
      outputsById: {},
      outputsByTitle: {},
      startTime,
      endTime: new Date(),
    };
  }
}

/** A node as its activity runs it: tried as often as its retry settings say, with their backoff. */
export async function executeWithRetries(
  deps: NodeActivityDeps,
  runId: string,
  budget: BudgetScope,
  node: GraphNode,
  input: Record<string, unknown>,
  signal: AbortSignal,
  dryRun?: DryRun,
) {
  const attempts = PURE_NODE_TYPES.has(node.node_type) ? 1 : nodeAttempts(node.config);
  for (let attempt = 1; ; attempt++) {
    try {
      return await executeNode(deps, { runId, node, input, budget, ...(dryRun ? { dryRun } : {}) });
    } catch (err) {
      const final = err instanceof ApplicationFailure && err.nonRetryable;
      if (final || attempt >= attempts || signal.aborted) throw err;
      const backoff = nodeRetryDelayMs(attempt);
      const given =
        err instanceof ApplicationFailure && typeof err.nextRetryDelay === 'number' ? err.nextRetryDelay : undefined;
      await sleep(given ?? backoff, signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
