import { ParentClosePolicy, isCancellation, proxyActivities, startChild, workflowInfo } from '@temporalio/workflow';
import type { ScheduleActivities } from '../activities';
import type { ScheduledRunInput } from '../../src/contracts/schedule-contract';
import { ScheduledStartTime } from '../../src/contracts/search-attributes';
import { childRunOptions } from './child-run';

const { recordScheduledRun } = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/**
 * One fire of a Spur schedule (the action of its Temporal Schedule): record the run, then run its
 * workflow as a child and wait for it, so the Schedule's overlap policy sees the run itself (`skip`
 * starts nothing while it goes on, `cancel_other` cancels it). The child outlives a fire that is
 * terminated. A run the reconciler started first (this worker died between recording and start) is
 * left to run on its own.
 */
export async function spurScheduledRun(input: ScheduledRunInput): Promise<{ runId: string | null }> {
  const info = workflowInfo();
  const scheduled = info.typedSearchAttributes.get(ScheduledStartTime) ?? info.startTime;
  const plan = await recordScheduledRun({
    scheduleId: input.scheduleId,
    scheduledTime: scheduled.toISOString(),
    fireKey: info.workflowId,
  });
  if (plan.kind === 'none') return { runId: plan.runId };
  try {
    const child = await startChild(plan.workflowType, {
      ...childRunOptions(plan),
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
    await child.result();
  } catch (err) {
    // Cancelled by the overlap policy (cancel_other): so is the run. Anything else (the run
    // failed, or it was started elsewhere already) its record tells.
    if (isCancellation(err)) throw err;
  }
  return { runId: plan.runId };
}
