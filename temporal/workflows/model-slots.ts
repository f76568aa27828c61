import {
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  proxyLocalActivities,
  setHandler,
  sleep,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { LimitActivities } from '../activities/limit.activities';
import { nodeAttempts, nodeRetryDelayMs } from '../../src/engine/node-retries';
import type { GraphNode, TokenUsage } from '../../src/engine/run-contract';
import {
  type AskedLimits,
  type HeldSlots,
  type SlotRelease,
  type SlotsReturned,
  releaseSlotSignal,
  retryAfterOf,
  slotGrantedSignal,
  slotQueuedSignal,
} from '../../src/contracts/limit-contract';
import { FINAL_NODE_FAILURES, applicationCause } from '../../src/contracts/failures';
import { ioNodeTimeoutSeconds } from './activity-options';

const local = proxyLocalActivities<LimitActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

/** What the run shows of a node waiting for a slot. */
export interface SlotWaitHooks {
  waiting(nodeId: string, key: string): void;
  granted(nodeId: string, waitedMs: number): void;
}

/**
 * One attempt of a model-calling node's activity (holding `slots`, which it gives back itself),
 * and the same activity with Temporal's own retries.
 */
export interface ModelCallAttempts<T> {
  once(slots: HeldSlots): Promise<T & SlotsReturned>;
  withRetries(): Promise<T>;
}

/**
 * A run's side of the fleet-wide limits (model-limit.workflow.ts): before each attempt of a
 * model call, a slot of every limit on its model, waited for in this workflow (no worker slot, no
 * thread); after it, the slots back at once, whatever happened. Under a limit the node's retries
 * are made here, one attempt per slot, so a provider's 429 with Retry-After holds back the whole
 * limit and every attempt is counted; without one, the activity retries as any other.
 */
export class ModelSlots {
  private readonly grants = new Map<string, { count: number; waitedMs: number }>();
  private readonly waitingNode = new Map<string, string>();

  constructor(private readonly hooks: SlotWaitHooks) {
    setHandler(slotGrantedSignal, ({ requestId, waitedMs }) => {
      const had = this.grants.get(requestId) ?? { count: 0, waitedMs: 0 };
      this.grants.set(requestId, { count: had.count + 1, waitedMs: Math.max(had.waitedMs, waitedMs) });
    });
    setHandler(slotQueuedSignal, ({ requestId, key }) => {
      const nodeId = this.waitingNode.get(requestId);
      if (nodeId !== undefined) this.hooks.waiting(nodeId, key);
    });
  }

  async call<T extends { usage?: TokenUsage }>(
    node: GraphNode,
    model: string,
    tokens: number,
    attempts: ModelCallAttempts<T>,
  ): Promise<T> {
    const tries = nodeAttempts(node.config);
    const leaseMs = (ioNodeTimeoutSeconds(node.config) + 90) * 1000;
    for (let attempt = 1; ; attempt++) {
      const requestId = uuid4();
      this.waitingNode.set(requestId, node.id);
      const asked = await local.askModelSlots({
        requestId,
        workflowId: workflowInfo().workflowId,
        model,
        tokens,
        leaseMs,
      });
      if (asked.length === 0) {
        this.waitingNode.delete(requestId);
        return attempts.withRetries();
      }
      let outcome: { ok: true; value: T; released: boolean } | { ok: false; err: unknown };
      try {
        await condition(() => (this.grants.get(requestId)?.count ?? 0) >= asked.length);
        const { waitedMs } = this.grants.get(requestId) ?? { waitedMs: 0 };
        if (waitedMs > 0) this.hooks.granted(node.id, waitedMs);
        const held = { requestId, limitWorkflowIds: asked.map((limit) => limit.limitWorkflowId) };
        const { slotsReleased, ...value } = await attempts.once(held);
        outcome = { ok: true, value: value as unknown as T, released: slotsReleased === true };
      } catch (err) {
        outcome = { ok: false, err };
      }
      const holdBackMs = outcome.ok ? undefined : retryAfterOf(outcome.err);
      // The attempt's activity gave its slots back as the provider answered; otherwise (it failed,
      // timed out or could not signal) the run does.
      if (!outcome.ok || !outcome.released)
        await release(asked, {
          requestId,
          ...(outcome.ok && outcome.value.usage ? { tokens: outcome.value.usage.total_tokens } : {}),
          ...(holdBackMs ? { holdBackMs } : {}),
        });
      this.grants.delete(requestId);
      this.waitingNode.delete(requestId);
      if (outcome.ok) return outcome.value;
      const err = outcome.err;
      if (isCancellation(err) || !retryable(err) || attempt >= tries) throw err;
      await sleep(holdBackMs ?? nodeRetryDelayMs(attempt));
    }
  }
}

/** Even a cancelled run gives its slots back. */
function release(asked: AskedLimits, body: SlotRelease): Promise<unknown> {
  return CancellationScope.nonCancellable(() =>
    Promise.all(
      asked.map(
        (limit) =>
          getExternalWorkflowHandle(limit.limitWorkflowId)
            .signal(releaseSlotSignal, body)
            .catch(() => undefined), // a limit that ended (removed) holds nothing
      ),
    ),
  );
}

function retryable(err: unknown): boolean {
  const app = applicationCause(err);
  return !app || (!app.nonRetryable && !FINAL_NODE_FAILURES.includes(app.type ?? ''));
}
