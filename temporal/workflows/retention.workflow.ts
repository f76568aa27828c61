import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { RetentionActivities } from '../activities';
import type { RetentionPassInput, RetentionTally } from '../../src/contracts/retention-contract';

const activities = proxyActivities<RetentionActivities>({
  // A page deletes at most its page size of runs (a batch's rows count), each a handful of deletes.
  startToCloseTimeout: '10m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 10 },
});

/** Well under Temporal's limits: a pass over a long backlog goes on in a fresh history. */
const HISTORY_EVENTS = 2000;

/**
 * One pass of run retention, started by a daily Temporal Schedule (temporal/retention-schedule.ts):
 * page by page over the finished runs past their workflow's retention, each page one activity of
 * bounded size, until none is left. Its result is the tally, readable in the Web UI.
 */
export async function spurRetention(input: RetentionPassInput): Promise<RetentionTally> {
  const tally = input.resume?.tally ?? { deleted_runs: 0, kept_active: await activities.retentionKeptActive() };
  let after = input.resume?.after ?? null;
  for (;;) {
    const page = await activities.retentionPrunePage({ after, pageSize: input.pageSize });
    tally.deleted_runs += page.deleted_runs;
    tally.kept_active += page.kept_active;
    if (page.next === null) return tally;
    after = page.next;
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > HISTORY_EVENTS)
      return continueAsNew<typeof spurRetention>({ pageSize: input.pageSize, resume: { after, tally } });
  }
}
