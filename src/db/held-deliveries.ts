import { isDuplicateKeyError, nextSequence } from './ids';
import { toJsonText } from './json-text';
import type { HeldDeliveryDoc, Models } from './models';
import type { StoredCallback } from './runs/run-documents';

/** A delivery to hold: its run's inputs as the delivery made them, and what its run will claim. */
export interface DeliveryToHold {
  /** The idempotency record's id its run claims (keyRecordId of `keyScope`). */
  id: string;
  workflowId: string;
  triggerId: string;
  deliveryId: string | null;
  keyScope: { route: string; target: string; key: string };
  bodyHash: string;
  initialInputs: Record<string, Record<string, unknown>>;
  callback: StoredCallback | null;
  respond: 'accepted' | 'result';
}

/**
 * The one writer of held deliveries: a webhook's deliveries kept while their workflow is paused,
 * released in the order they arrived (received_at, then seq). Inserted once (a redelivery of the
 * same delivery id finds the first by its `_id`), removed once its run has started.
 */
export function createHeldDeliveries(models: Models) {
  const { HeldDelivery: Held } = models;

  return {
    /** Keeps the delivery; false when it was held already (a redelivery of the same delivery id). */
    async hold(d: DeliveryToHold, now = new Date()): Promise<boolean> {
      try {
        await Held.create({
          _id: d.id,
          seq: await nextSequence(models.conn, 'heldDelivery'),
          workflow_id: d.workflowId,
          trigger_id: d.triggerId,
          delivery_id: d.deliveryId,
          key_scope: d.keyScope,
          body_hash: d.bodyHash,
          initial_inputs: toJsonText(d.initialInputs),
          callback: d.callback,
          respond: d.respond,
          received_at: now,
        });
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        throw err;
      }
    },

    count: (workflowId: string) => Held.countDocuments({ workflow_id: workflowId }),

    /** The oldest `limit` held deliveries of a workflow, in the order they arrived. */
    oldest: (workflowId: string, limit: number) =>
      Held.find({ workflow_id: workflowId }).sort({ received_at: 1, seq: 1 }).limit(limit).lean<HeldDeliveryDoc[]>(),

    /** Its run has started (or was recorded by an earlier release): nothing is held for it any more. */
    async remove(id: string): Promise<void> {
      await Held.deleteOne({ _id: id });
    },

    async removeOfWorkflow(workflowId: string): Promise<void> {
      await Held.deleteMany({ workflow_id: workflowId });
    },
  };
}

export type HeldDeliveries = ReturnType<typeof createHeldDeliveries>;
