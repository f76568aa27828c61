import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import {
  type BreakerSwitch,
  type LimitRule,
  breakerSwitchSignal,
  limitWorkflowId,
  ruleChangedSignal,
} from '../contracts/limit-contract';
import { WorkflowType } from '../contracts/workflow-names';
import { workspaceAttribute } from '../db/workspace-scope';
import type { LimitScope } from './provider-limits';

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

/**
 * An operator's switch of a limit's breaker, sent to the limit's workflow and starting it if it is
 * not running (an opened breaker keeps it running until closed): a workspace's limit as the
 * workspace's workflow, the fleet's as no workspace's. Temporal away: the error (503).
 */
export function breakerSwitcher(
  temporal: () => Client,
  temporalSettings: { taskQueue: string; workflowIdPrefix: string },
) {
  return async (key: string, change: BreakerSwitch, scope: LimitScope): Promise<void> => {
    await temporal().workflow.signalWithStart(WorkflowType.spurModelLimit, {
      workflowId: limitWorkflowId(key, temporalSettings.workflowIdPrefix),
      taskQueue: temporalSettings.taskQueue,
      args: [{ key }],
      signal: breakerSwitchSignal,
      signalArgs: [change],
      staticSummary: `Fleet-wide limit on ${key} model requests`,
      typedSearchAttributes: workspaceAttribute(scope === 'fleet' ? null : undefined),
    });
  };
}
