import { proxyActivities } from '@temporalio/workflow';
import type { ReconcileActivities } from '../activities';
import type {
  ReconcileInput,
  ReconcilePageResult,
  ReconcilePassTally,
  RunActionReconcileResult,
} from '../../src/contracts/reconcile-contract';

const activities = proxyActivities<ReconcileActivities>({
  startToCloseTimeout: '5m',
  // A page heartbeats after every run it checks.
  heartbeatTimeout: '1m',
  // Bounded: the next scheduled pass tries again anyway.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

/**
 * One pass of the reconciler, started by a Temporal Schedule (see temporal/reconciler-schedule.ts):
 * page by page over the open runs, each page one activity, at most `maxPages` per pass. The tally
 * is the workflow's result, readable in the Web UI.
 */
export async function spurReconcile(input: ReconcileInput): Promise<ReconcilePassTally> {
  const total: ReconcilePassTally = {
    checked: 0,
    started: 0,
    discarded: 0,
    failed: 0,
    canceled: 0,
    actionsStarted: 0,
    actionsAbandoned: 0,
  };
  let after: string | null = null;
  for (let page = 0; page < input.maxPages; page++) {
    const result: ReconcilePageResult = await activities.reconcileRuns({
      after,
      graceMs: input.graceMs,
      pageSize: input.pageSize,
    });
    total.checked += result.checked;
    total.started += result.started;
    total.discarded += result.discarded;
    total.failed += result.failed;
    total.canceled += result.canceled;
    if (result.next === null) break;
    after = result.next;
  }
  // Bulk actions whose api died before starting them, after the runs (appended, so a pass in
  // flight when this was deployed replays as it was).
  let afterAction: string | null = null;
  for (let page = 0; page < input.maxPages; page++) {
    const result: RunActionReconcileResult = await activities.reconcileRunActions({
      after: afterAction,
      graceMs: input.graceMs,
      pageSize: input.pageSize,
    });
    total.actionsStarted += result.started;
    total.actionsAbandoned += result.abandoned;
    if (result.next === null) break;
    afterAction = result.next;
  }
  return total;
}
