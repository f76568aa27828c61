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
import { type WaitReason, failureOutcomeOf } from '../../src/contracts/breaker-contract';
import { ioNodeTimeoutSeconds } from './activity-options';

const local = proxyLocalActivities<LimitActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

/** What the run shows of a node waiting for a slot. */
export interface SlotWaitHooks {
  waiting(nodeId: string, key: string, reason: WaitReason): void;
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
 * thread); after it, the slots back at once, whatever happened, with how the call ended (what a
 * limit's breaker counts). Under a limit the node's retries are made here, one attempt per slot,
 * so a provider's 429 with Retry-After holds back the whole limit and every attempt is counted;
 * without one, the activity retries as any other. A failed attempt whose next ask waited behind
 * an open breaker spends no retry: the breaker answered for the provider's outage.
 */
export class ModelSlots {
  private readonly grants = new Map<string, { count: number; waitedMs: number; parked: boolean }>();
  private readonly waitingNode = new Map<string, string>();

  constructor(private readonly hooks: SlotWaitHooks) {
    setHandler(slotGrantedSignal, ({ requestId, waitedMs, parked }) => {
      const had = this.grants.get(requestId) ?? { count: 0, waitedMs: 0, parked: false };
      this.grants.set(requestId, {
        count: had.count + 1,
        waitedMs: Math.max(had.waitedMs, waitedMs),
        parked: had.parked || parked === true,
      });
    });
    setHandler(slotQueuedSignal, ({ requestId, key, reason }) => {
      const nodeId = this.waitingNode.get(requestId);
      if (nodeId !== undefined) this.hooks.waiting(nodeId, key, reason ?? 'limit');
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
    /** Failed attempts counted against the node's retries. */
    let spent = 0;
    /**
     * A failure past the node's last retry that a breaker counts: judged at the next ask. Parked
     * there, the breaker opened for it and the node goes on; granted at once, the node fails with it.
     */
    let owed: unknown;
    for (;;) {
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
        if (owed !== undefined) throw owed;
        return attempts.withRetries();
      }
      let outcome: { ok: true; value: T; released: boolean } | { ok: false; err: unknown; unsent?: true };
      try {
        await condition(() => (this.grants.get(requestId)?.count ?? 0) >= asked.length);
        const { waitedMs, parked } = this.grants.get(requestId) ?? { waitedMs: 0, parked: false };
        if (waitedMs > 0) this.hooks.granted(node.id, waitedMs);
        if (parked && spent > 0) spent--;
        if (owed !== undefined && !parked) {
          outcome = { ok: false, err: owed, unsent: true };
        } else {
          owed = undefined;
          const held = { requestId, limitWorkflowIds: asked.map((limit) => limit.limitWorkflowId) };
          const { slotsReleased, ...value } = await attempts.once(held);
          outcome = { ok: true, value: value as unknown as T, released: slotsReleased === true };
        }
      } catch (err) {
        outcome = { ok: false, err };
      }
      // A failure owed from before went out then: its Retry-After held the limit back already.
      const holdBackMs = outcome.ok || outcome.unsent ? undefined : retryAfterOf(outcome.err);
      const callOutcome = outcome.ok ? ('ok' as const) : outcome.unsent ? undefined : failureOutcomeOf(outcome.err);
      // The attempt's activity gave its slots back as the provider answered; otherwise (it failed,
      // timed out or could not signal) the run does.
      if (!outcome.ok || !outcome.released)
        await release(asked, {
          requestId,
          ...(outcome.ok && outcome.value.usage ? { tokens: outcome.value.usage.total_tokens } : {}),
          ...(holdBackMs ? { holdBackMs } : {}),
          ...(callOutcome ? { outcome: callOutcome } : {}),
        });
      this.grants.delete(requestId);
      this.waitingNode.delete(requestId);
      if (outcome.ok) return outcome.value;
      const err = outcome.err;
      if (outcome.unsent || isCancellation(err) || !retryable(err)) throw err;
      spent++;
      if (spent >= tries) {
        if (!callOutcome || callOutcome === 'ok' || !asked.some((limit) => limit.breaker)) throw err;
        owed = err;
      }
      await sleep(holdBackMs ?? nodeRetryDelayMs(spent));
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
