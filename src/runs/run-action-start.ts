import type { WorkflowClient } from '@temporalio/client';
import { type RunActionInput, runActionWorkflowId } from '../contracts/run-action-contract';
import { WorkflowType } from '../contracts/workflow-names';
import type { WorkQueue } from '../contracts/work-share';
import type { RunActionDoc } from '../db/models';
import { workspaceAttribute, workspaceShare } from '../db/workspace-scope';

/** Runs per page: one activity acts on a page, one run at a time. */
export const RUN_ACTION_PAGE_SIZE = 20;

export interface RunActionStartSettings extends WorkQueue {
  /** SPUR_RUN_ACTION_RATE: runs acted on per second at most. */
  rate: number;
}

/**
 * Starts a recorded bulk action's `spurRunAction` workflow, in the current workspace: the api right
 * after recording it, or the reconciler for one whose api died before it could. Both start the same
 * workflow id, and a start finding it running joins it, so the action is acted on once.
 */
export async function startRunActionWorkflow(
  workflows: WorkflowClient,
  action: Pick<RunActionDoc, '_id' | 'action' | 'matched'>,
  settings: RunActionStartSettings,
): Promise<void> {
  const input: RunActionInput = {
    actionId: action._id,
    total: action.matched,
    pageSize: RUN_ACTION_PAGE_SIZE,
    pageIntervalMs: Math.ceil((RUN_ACTION_PAGE_SIZE * 1000) / settings.rate),
  };
  await workflows.start(WorkflowType.spurRunAction, {
    workflowId: runActionWorkflowId(action._id, settings.workflowIdPrefix),
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    staticSummary: `bulk ${action.action} ${action._id} of ${action.matched} runs`,
    typedSearchAttributes: workspaceAttribute(),
    // Bulk work: on the bulk queue, whose slots give way to runs someone waits on.
    ...workspaceShare('bulk', settings),
  });
}
