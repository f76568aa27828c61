import { trusted } from 'mongoose';
import { isDuplicateKeyError } from './ids';
import { fromJsonText, toJsonText } from './json-text';
import type { Models } from './models';

/** How a callback's wait ended, as its record says. */
export type CallbackEnd = { status: 'delivered'; body: Record<string, unknown> } | { status: 'expired' };

const idOf = (runId: string, nodeId: string) => `${runId}:${nodeId}`;

/**
 * The only writer of `inbound_callbacks`: a WaitForCallbackNode's callback is used once. The api
 * claims it for a call (`deliver`), the run's workflow for its timeout (`expire`); the `_id`
 * index lets exactly one of them insert, so a call after the timeout, or a second call, is
 * refused, and a call the workflow never heard of (its api died before the signal) is found by
 * the timeout's claim.
 */
export function createInboundCallbacks(models: Models) {
  const { InboundCallback } = models;

  async function insert(runId: string, nodeId: string, status: CallbackEnd['status'], body: string | null) {
    try {
      await InboundCallback.create({
        _id: idOf(runId, nodeId),
        run_id: runId,
        node_id: nodeId,
        status,
        body,
        at: new Date(),
      });
      return true;
    } catch (err) {
      if (isDuplicateKeyError(err)) return false;
      throw err;
    }
  }

  return {
    /** Claims the callback for a call with this body: false when it was used or expired already. */
    deliver: (runId: string, nodeId: string, body: Record<string, unknown>) =>
      insert(runId, nodeId, 'delivered', toJsonText(body)),

    /** Gives a claim back: its call could not reach the run (Temporal unavailable), so it may be sent again. */
    async release(runId: string, nodeId: string): Promise<void> {
      await InboundCallback.deleteOne({ _id: idOf(runId, nodeId), status: 'delivered' });
    },

    /** The timeout's claim, or how the wait ended if a call claimed it first (an activity retried: the same answer). */
    async expire(runId: string, nodeId: string): Promise<CallbackEnd> {
      if (await insert(runId, nodeId, 'expired', null)) return { status: 'expired' };
      const doc = await InboundCallback.findById(idOf(runId, nodeId)).lean();
      if (doc?.status === 'delivered') return { status: 'delivered', body: fromJsonText(doc.body) ?? {} };
      return { status: 'expired' };
    },

    /** Deleted runs' records go with them. */
    async removeOfRuns(runIds: string[]): Promise<void> {
      await InboundCallback.deleteMany({ run_id: trusted({ $in: runIds }) });
    },
  };
}

export type InboundCallbacks = ReturnType<typeof createInboundCallbacks>;
