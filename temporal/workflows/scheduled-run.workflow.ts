import { ParentClosePolicy, isCancellation, proxyActivities, startChild, workflowInfo } from '@temporalio/workflow';
import type { ScheduleActivities } from '../activities';
import type { ScheduledRunInput } from '../../src/contracts/schedule-contract';
import {
  ScheduledStartTime,
  SpurRunStatus,
  SpurRunType,
  SpurStartedBy,
  SpurWorkflowId,
  SpurWorkspace,
} from '../../src/contracts/search-attributes';

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
  const workspace = info.typedSearchAttributes.get(SpurWorkspace);
  const plan = await recordScheduledRun({
    scheduleId: input.scheduleId,
    scheduledTime: scheduled.toISOString(),
    fireKey: info.workflowId,
  });
  if (plan.kind === 'none') return { runId: plan.runId };
  try {
    const child = await startChild(plan.workflowType, {
      workflowId: plan.workflowId,
      args: plan.args,
      taskQueue: info.taskQueue,
      staticSummary: plan.summary,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      parentClosePolicy: ParentClosePolicy.ABANDON,
      typedSearchAttributes: [
        { key: SpurWorkflowId, value: plan.spurWorkflowId },
        { key: SpurRunType, value: plan.runType },
        { key: SpurRunStatus, value: 'PENDING' },
        ...(plan.startedBy ? [{ key: SpurStartedBy, value: plan.startedBy }] : []),
        ...(workspace ? [{ key: SpurWorkspace, value: workspace }] : []),
      ],
    });
    await child.result();
  } catch (err) {
    // Cancelled by the overlap policy (cancel_other): so is the run. Anything else (the run
    // failed, or it was started elsewhere already) its record tells.
    if (isCancellation(err)) throw err;
  }
  return { runId: plan.runId };
}
