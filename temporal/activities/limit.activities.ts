import { Context } from '@temporalio/activity';
import type { ProviderLimits } from '../../src/usage/provider-limits';
import {
  type AskSlotsInput,
  type AskedLimits,
  askSlotSignal,
  limitKeysOf,
  limitWorkflowId,
} from '../../src/contracts/limit-contract';
import { WorkflowType } from '../../src/contracts/workflow-names';
import type { BreakerRecord } from '../../src/contracts/breaker-contract';
import { metrics } from '../../src/metrics/metrics';

export interface LimitActivityDeps {
  limits: ProviderLimits;
  temporal: { taskQueue: string; workflowIdPrefix: string };
}

export function createLimitActivities(deps: LimitActivityDeps) {
  return {
    /**
     * Asks each limit on the model for a slot, starting its workflow if it is not running. The
     * grants arrive as signals to the run; asking again (a retry) is harmless: a limit counts a
     * request id once.
     */
    async askModelSlots(input: AskSlotsInput): Promise<AskedLimits> {
      // Read at every ask (one indexed lookup beside a model request): a change applies to the next call.
      const applying = await deps.limits.on(limitKeysOf(input.model));
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
        asked.push({ key: rule.key, limitWorkflowId: workflowId, ...(rule.breaker ? { breaker: true } : {}) });
      }
      return asked;
    },

    /** A limit's breaker changed: its entry shows the state, and the metrics count its openings (`key`: the stored id). */
    async recordBreaker(input: { key: string; record: BreakerRecord; openings: number }): Promise<void> {
      await deps.limits.recordBreaker(input.key, input.record);
      // After the write: a retried write counts once.
      if (input.openings > 0) metrics.breakerOpenings.inc({ key: input.key }, input.openings);
    },
  };
}

export type LimitActivities = ReturnType<typeof createLimitActivities>;
