import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';

/** The status of a workflow (its latest execution), or null when Temporal has none by that id. */
export async function workflowStatus(workflowId: string): Promise<string | null> {
  try {
    return (await Context.current().client.workflow.getHandle(workflowId).describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
}
