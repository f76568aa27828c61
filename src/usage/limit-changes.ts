import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { limitWorkflowId, ruleChangedSignal, type LimitRule } from '../contracts/limit-contract';

/**
 * An operator's change reaches the limits now running (a removed one lets everyone waiting go);
 * a limit not running reads the rule with its next ask. Temporal away: the change is stored, and
 * the error (503) tells the operator to send it again.
 */
export function limitChangeNotifier(temporal: () => Client, workflowIdPrefix: string) {
  return async (changes: Array<{ key: string; rule: LimitRule | null }>): Promise<void> => {
    await Promise.all(
      changes.map(async ({ key, rule }) => {
        try {
          await temporal().workflow.getHandle(limitWorkflowId(key, workflowIdPrefix)).signal(ruleChangedSignal, rule);
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }
      }),
    );
  };
}
