import { trusted } from 'mongoose';
import type { CallbackAttemptDoc } from './models/callback-delivery.model';
import type { CallbackDeliveryDoc, Models } from './models';

export interface DeliveryKey {
  deliveryId: string;
  runId: string;
  event: string;
  url: string;
}

/** A delivery as listed: what `open` sets to null or [] is always there (see listOfRun). */
export type DeliveryRecord = Omit<CallbackDeliveryDoc, 'attempts' | 'reason'> & {
  attempts: CallbackAttemptDoc[];
  reason: string | null;
};
type StoredDelivery = Omit<DeliveryRecord, 'attempts' | 'reason'> &
  Partial<Pick<DeliveryRecord, 'attempts' | 'reason'>>;

export type AttemptRecord = Omit<CallbackAttemptDoc, 'status_code' | 'error' | 'duration_ms'> & {
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
};

/**
 * Callback deliveries and their attempts (collection `callback_deliveries`), and the callback a
 * run was given. A delivery's record is written only by its own delivery workflow, one attempt
 * at a time (read, then write: FerretDB v1 has no arrayFilters).
 */
const FINAL_DELIVERY: ('delivered' | 'failed')[] = ['delivered', 'failed'];

export function createCallbackDeliveries(models: Models) {
  const { CallbackDelivery } = models;

  return {
    /** The deliveries of deleted runs (their workflow's delete). */
    async removeOfRuns(ids: string[]): Promise<void> {
      await CallbackDelivery.deleteMany({ run_id: trusted({ $in: ids }) });
    },

    /** Whether a delivery of the run's events is still under way (its workflow writes its record again). */
    async pendingOf(runId: string): Promise<boolean> {
      return (await CallbackDelivery.exists({ run_id: runId, status: trusted({ $nin: FINAL_DELIVERY }) })) !== null;
    },

    /**
     * The delivery is under way (before its first attempt): listed as pending from now on. On
     * FerretDB the null and [] below are not stored (see listOfRun): readers must not rely on them.
     */
    async open(key: DeliveryKey): Promise<void> {
      const now = new Date();
      await CallbackDelivery.updateOne(
        { _id: key.deliveryId },
        {
          $setOnInsert: {
            run_id: key.runId,
            event: key.event,
            url: key.url,
            status: 'pending',
            reason: null,
            created_at: now,
            updated_at: now,
            attempts: [],
          },
        },
        { upsert: true },
      );
    },

    /** Records one attempt (again, if a retry of the activity repeats it) and the delivery's status. */
    async recordAttempt(
      key: DeliveryKey,
      attempt: AttemptRecord,
      status: 'pending' | 'delivered' | 'failed',
      reason: string | null = null,
    ): Promise<void> {
      const now = new Date();
      const existing = await CallbackDelivery.findById(key.deliveryId, { attempts: 1 }).lean<
        Pick<CallbackDeliveryDoc, 'attempts'>
      >();
      const attempts = [...(existing?.attempts ?? []).filter((a) => a.attempt !== attempt.attempt), attempt].sort(
        (a, b) => a.attempt - b.attempt,
      );
      // An attempt that ends after the delivery was given up (its activity outlived the time limit)
      // is recorded, but never reopens the delivery: a delivered or failed status stays.
      const open = await CallbackDelivery.updateOne(
        { _id: key.deliveryId, status: trusted({ $nin: FINAL_DELIVERY }) },
        { $set: { attempts, status, reason, updated_at: now } },
      );
      if (open.matchedCount > 0) return;
      await CallbackDelivery.updateOne(
        { _id: key.deliveryId },
        {
          $set: { attempts, updated_at: now },
          $setOnInsert: { run_id: key.runId, event: key.event, url: key.url, created_at: now, status, reason },
        },
        { upsert: true },
      );
    },

    /** The delivery stopped without being taken (time limit, refusal): it stays failed. */
    async giveUp(deliveryId: string, reason: string): Promise<void> {
      await CallbackDelivery.updateOne(
        { _id: deliveryId, status: trusted({ $ne: 'delivered' }) },
        { $set: { status: 'failed', reason, updated_at: new Date() } },
      );
    },

    /** One stretch of the run's deliveries, oldest first. */
    async listOfRun(runId: string, { skip, limit }: { skip: number; limit: number }): Promise<DeliveryRecord[]> {
      const docs = await CallbackDelivery.find({ run_id: runId })
        .sort({ created_at: 1, _id: 1 })
        .skip(skip)
        .limit(limit)
        .lean<StoredDelivery[]>();
      // FerretDB v1 (the dev and test database) leaves out the null and empty-array values of an
      // upsert's $setOnInsert, so a delivery opened but not yet attempted has no attempts field there.
      return docs.map((d) => ({ ...d, attempts: d.attempts ?? [], reason: d.reason ?? null }));
    },
  };
}

export type CallbackDeliveries = ReturnType<typeof createCallbackDeliveries>;
