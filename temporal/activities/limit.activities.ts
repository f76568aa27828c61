import { Context } from '@temporalio/activity';
import type { ProviderLimits } from '../../src/usage/provider-limits';
import {
  type AskSlotsInput,
  type AskedLimits,
  type LimitRule,
  askSlotSignal,
  limitKeysOf,
  limitWorkflowId,
} from '../shared/limit-contract';
import { WorkflowType } from '../shared/workflow-names';

export interface LimitActivityDeps {
  limits: ProviderLimits;
  temporal: { taskQueue: string; workflowIdPrefix: string };
}

/** How long a worker trusts the limits it read: an operator's change applies within this. */
const RULES_FRESH_MS = 1000;

export function createLimitActivities(deps: LimitActivityDeps) {
  let cached: { at: number; rules: Map<string, LimitRule> } | undefined;
  async function rules(): Promise<Map<string, LimitRule>> {
    if (cached && Date.now() - cached.at < RULES_FRESH_MS) return cached.rules;
    const all = await deps.limits.list();
    cached = { at: Date.now(), rules: new Map(all.map((r) => [r.key, r])) };
    return cached.rules;
  }

  return {
    /**
     * Asks each limit on the model for a slot, starting its workflow if it is not running. The
     * grants arrive as signals to the run; asking again (a retry) is harmless: a limit counts a
     * request id once.
     */
    async askModelSlots(input: AskSlotsInput): Promise<AskedLimits> {
      const known = await rules();
      const applying = limitKeysOf(input.model).flatMap((key) => {
        const rule = known.get(key);
        return rule ? [rule] : [];
      });
      const client = Context.current().client;
      const asked: AskedLimits = [];
      for (const rule of applying) {
        const workflowId = limitWorkflowId(rule.key, deps.temporal.workflowIdPrefix);
        await client.workflow.signalWithStart(WorkflowType.spurModelLimit, {
          workflowId,
          taskQueue: deps.temporal.taskQueue,
          args: [{ key: rule.key }],
          signal: askSlotSignal,
          signalArgs: [
            {
              requestId: input.requestId,
              workflowId: input.workflowId,
              tokens: input.tokens,
              leaseMs: input.leaseMs,
              rule,
            },
          ],
          staticSummary: `Fleet-wide limit on ${rule.key} model requests`,
        });
        asked.push({ key: rule.key, limitWorkflowId: workflowId });
      }
      return asked;
    },
  };
}

export type LimitActivities = ReturnType<typeof createLimitActivities>;
