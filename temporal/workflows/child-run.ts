import { type ChildWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import type { ChildRunStart } from '../../src/contracts/schedule-contract';
import {
  SpurRunStatus,
  SpurRunType,
  SpurStartedBy,
  SpurWorkflowId,
  SpurWorkspace,
} from '../../src/contracts/search-attributes';

/**
 * How a workflow starts a recorded run's workflow as its child (a schedule's fire, a parent run's
 * SubworkflowNode): on its own task queue and in its own workspace, with the run's search
 * attributes as the launcher sets them, never a second time under the same id.
 */
export function childRunOptions(plan: ChildRunStart): ChildWorkflowOptions & { args: unknown[] } {
  const info = workflowInfo();
  const workspace = info.typedSearchAttributes.get(SpurWorkspace);
  return {
    workflowId: plan.workflowId,
    args: plan.args,
    taskQueue: info.taskQueue,
    staticSummary: plan.summary,
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    typedSearchAttributes: [
      { key: SpurWorkflowId, value: plan.spurWorkflowId },
      { key: SpurRunType, value: plan.runType },
      { key: SpurRunStatus, value: plan.listedAs ?? 'PENDING' },
      ...(plan.startedBy ? [{ key: SpurStartedBy, value: plan.startedBy }] : []),
      ...(workspace ? [{ key: SpurWorkspace, value: workspace }] : []),
    ],
  };
}
