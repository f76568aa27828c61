import {
  ActivityCancellationType,
  CancellationScope,
  executeChild,
  isCancellation,
  proxyActivities,
} from '@temporalio/workflow';
import type { EvalActivities } from '../activities';
import type { EvalEnd, EvalRunInput } from '../../src/contracts/eval-contract';
import { WorkflowType, runWorkflowId } from '../../src/contracts/workflow-names';
import { CANCELED_MESSAGE } from '../../src/engine/statuses';
import { failureMessage } from './graph-runner';

const bookkeeping = proxyActivities<EvalActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 40 },
});
const scoring = proxyActivities<EvalActivities>({
  // Scoring follows the batch for as long as it runs; heartbeats show it is alive.
  startToCloseTimeout: '24h',
  heartbeatTimeout: '10s',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  // Bounded: a suite or dataset deleted meanwhile, or a database away for ~25 minutes, fails the eval saying why.
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    maximumAttempts: 50,
    // Mongoose refusing a document, an input that is gone: no retry mends them.
    nonRetryableErrorTypes: ['CastError', 'ValidationError', 'StrictModeError', 'EvalInputGone'],
  },
});

/**
 * An eval run (`eval-<id>`): the workflow's batch over the suite's rows as a child workflow, and
 * beside it one activity that scores each row as its run ends. Both survive any worker's loss
 * (the child is durable, scoring skips rows already scored); cancelling this workflow cancels the
 * batch and its rows, and the rows that ended keep their scores.
 */
export async function spurEvalRun(input: EvalRunInput): Promise<void> {
  const { evalRunId, batch } = input;
  let end: EvalEnd = 'COMPLETED';
  let message: string | null = null;
  let rows: Promise<void> | undefined;
  try {
    await bookkeeping.markEvalRunning({ evalRunId });
    rows = executeChild(WorkflowType.spurBatchRun, {
      workflowId: runWorkflowId(batch.parentRunId, batch.workflowIdPrefix),
      args: [batch],
      staticSummary: `eval ${evalRunId}: batch ${batch.parentRunId}, ${batch.rowCount} rows`,
    }).catch((err: unknown) => {
      // A failed batch still leaves its ended rows to score; a cancel goes on up.
      if (isCancellation(err)) throw err;
      end = 'FAILED';
      message = `The batch failed: ${failureMessage(err)}`;
    });
    await Promise.all([rows, scoring.scoreEvalRows({ evalRunId })]);
  } catch (err) {
    if (isCancellation(err)) {
      // The batch records its own cancel as its workflow ends: this one ends after it, since a
      // parent that closes first has its child terminated, leaving the batch's record RUNNING.
      const batchEnded = rows?.catch(() => undefined);
      await CancellationScope.nonCancellable(async () => {
        await batchEnded;
        await bookkeeping.finishEval({ evalRunId, status: 'CANCELED', message: CANCELED_MESSAGE });
      });
      throw err;
    }
    end = 'FAILED';
    message = `Scoring failed: ${failureMessage(err)}`;
  }
  await bookkeeping.finishEval({ evalRunId, status: end, message });
}
