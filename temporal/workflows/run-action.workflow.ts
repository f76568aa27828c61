import {
  ActivityCancellationType,
  CancellationScope,
  continueAsNew,
  isCancellation,
  proxyActivities,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { RunActionActivities } from '../activities';
import type { RunActionInput, RunActionTally } from '../../src/contracts/run-action-contract';

const pages = proxyActivities<RunActionActivities>({
  startToCloseTimeout: '30m',
  // A page heartbeats before every run: a dead worker's page moves to another within seconds.
  heartbeatTimeout: '15s',
  // A stopped action's page ends after the run in hand, before the action's tally is taken.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  // Unbounded: a run the page cannot act on after a few tries is failed alone (the activity
  // counts its attempts), so only a database or Temporal away keeps a page retrying.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});
const bookkeeping = proxyActivities<RunActionActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

/**
 * A bulk action over the runs it matched when it was made: page by page, one activity each, a page
 * starting no sooner than `pageIntervalMs` after the one before, so it acts on at most
 * pageSize / pageIntervalMs runs a second whatever their number. Cancelled (the action's cancel),
 * it ends after the run in hand and records how far it got.
 */
export async function spurRunAction(input: RunActionInput): Promise<RunActionTally> {
  const { actionId, total, pageSize } = input;
  const tally: RunActionTally = { ...(input.tally ?? { done: 0, failed: 0 }) };
  try {
    for (let from = input.next ?? 0; from < total; from += pageSize) {
      if (workflowInfo().continueAsNewSuggested)
        return await continueAsNew<typeof spurRunAction>({ ...input, next: from, tally });
      const began = Date.now();
      const count = Math.min(pageSize, total - from);
      const page = await pages.actOnRunPage({ actionId, from, count, before: tally });
      tally.done += page.done;
      tally.failed += page.failed;
      const rest = input.pageIntervalMs - (Date.now() - began);
      if (rest > 0 && from + pageSize < total) await sleep(rest);
    }
  } catch (err) {
    if (isCancellation(err))
      await CancellationScope.nonCancellable(() => bookkeeping.finishRunAction({ actionId, status: 'CANCELED' }));
    throw err;
  }
  await bookkeeping.finishRunAction({ actionId, status: 'COMPLETED' });
  return tally;
}
