import { trusted } from 'mongoose';
import type { ApprovalChannel, ApprovalNotice } from '../../engine/approvals';
import type { ApprovalDeliveryDoc, Models } from '../models';
import type { APPROVAL_DELIVERY_STATUSES } from '../models/approval-delivery.model';

export interface ApprovalDeliveryKey {
  deliveryId: string;
  runId: string;
  pauseId: string;
  notice: ApprovalNotice;
  channel: ApprovalChannel;
  to: string;
  userId: string;
}

/** A delivery as a pause lists it. */
export interface ApprovalDeliveryView {
  id: string;
  notice: ApprovalNotice;
  channel: ApprovalChannel;
  to: string;
  user_id: string;
  status: (typeof APPROVAL_DELIVERY_STATUSES)[number];
  attempts: number;
  error: string | null;
  updated_at: string;
}

/**
 * Messages with approval links (collection `approval_deliveries`), written only by their delivery
 * workflows (the `pause.notification` event of one that ended is written by its run's workflow).
 */
export function createApprovalDeliveries(models: Models) {
  const { ApprovalDelivery } = models;
  async function settle(key: ApprovalDeliveryKey, status: 'sent' | 'failed' | 'skipped', error: string | null) {
    await ApprovalDelivery.updateOne(
      { _id: key.deliveryId },
      { $set: { status, error, updated_at: new Date() }, $inc: { attempts: status === 'sent' ? 1 : 0 } },
    );
  }

  return {
    /** The delivery is under way: listed as pending from now on. */
    async open(key: ApprovalDeliveryKey): Promise<void> {
      const now = new Date();
      await ApprovalDelivery.updateOne(
        { _id: key.deliveryId },
        {
          $setOnInsert: {
            run_id: key.runId,
            pause_id: key.pauseId,
            notice: key.notice,
            channel: key.channel,
            to: key.to,
            user_id: key.userId,
            status: 'pending',
            attempts: 0,
            error: null,
            created_at: now,
            updated_at: now,
          },
        },
        { upsert: true },
      );
    },
    /** An attempt that will be tried again: counted, with its error. */
    async attemptFailed(key: ApprovalDeliveryKey, error: string): Promise<void> {
      await ApprovalDelivery.updateOne(
        { _id: key.deliveryId },
        { $set: { error, updated_at: new Date() }, $inc: { attempts: 1 } },
      );
    },
    sent: (key: ApprovalDeliveryKey) => settle(key, 'sent', null),
    /** Not sent because the pause was decided before it went out. */
    skipped: (key: ApprovalDeliveryKey) => settle(key, 'skipped', 'the pause was decided before this message went out'),
    failed: (key: ApprovalDeliveryKey, reason: string) => settle(key, 'failed', reason),

    /** The deliveries of some pauses, oldest first. */
    async ofPauses(pauseIds: string[]): Promise<Map<string, ApprovalDeliveryView[]>> {
      const docs = await ApprovalDelivery.find({ pause_id: trusted({ $in: pauseIds }) })
        .sort({ created_at: 1, _id: 1 })
        .lean<ApprovalDeliveryDoc[]>();
      const byPause = new Map<string, ApprovalDeliveryView[]>();
      for (const d of docs) {
        const list = byPause.get(d.pause_id) ?? [];
        list.push({
          id: d._id,
          notice: d.notice as ApprovalNotice,
          channel: d.channel as ApprovalChannel,
          to: d.to,
          user_id: d.user_id,
          status: d.status,
          attempts: d.attempts ?? 0,
          error: d.error ?? null,
          updated_at: d.updated_at.toISOString(),
        });
        byPause.set(d.pause_id, list);
      }
      return byPause;
    },

    /** The deliveries of deleted runs (their workflow's delete). */
    async removeOfRuns(ids: string[]): Promise<void> {
      await ApprovalDelivery.deleteMany({ run_id: trusted({ $in: ids }) });
    },
  };
}

export type ApprovalDeliveries = ReturnType<typeof createApprovalDeliveries>;
