import { type Client, WorkflowNotFoundError, type WorkflowExecutionStatusName } from '@temporalio/client';
import { runWorkflowId } from '../contracts/workflow-names';

/** What Temporal says of a run's workflow: its status, or null when Temporal has none. */
export async function runWorkflowStatus(
  temporal: Client,
  workflowIdPrefix: string,
  runId: string,
): Promise<WorkflowExecutionStatusName | null> {
  try {
    return (await temporal.workflow.getHandle(runWorkflowId(runId, workflowIdPrefix)).describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}

/** Whether a run's Temporal workflow is running: false once it has closed, or when Temporal has none. */
export async function runWorkflowOpen(temporal: Client, workflowIdPrefix: string, runId: string): Promise<boolean> {
  return (await runWorkflowStatus(temporal, workflowIdPrefix, runId)) === 'RUNNING';
}
