import { trusted } from 'mongoose';
import {
  APPROVAL_NOTICES,
  type ApprovalChannel,
  type ApprovalNotice,
  approvalDeliveryId,
} from '../../engine/approvals';
import type { Models } from '../models';
import { findNumbered, markOwnersOf, ownerMarks } from '../owner-marks';
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
 * A pause with any is marked (`approval_delivery_pauses`), and reads look up the marked pauses'
 * messages by `_id` only (owner-marks.ts).
 */
export function createApprovalDeliveries(models: Models) {
  const { ApprovalDelivery, ApprovalDeliveryPause } = models;
  const pauses = ownerMarks(ApprovalDeliveryPause);
  async function settle(key: ApprovalDeliveryKey, status: 'sent' | 'failed' | 'skipped', error: string | null) {
    await ApprovalDelivery.updateOne(
      { _id: key.deliveryId },
      { $set: { status, error, updated_at: new Date() }, $inc: { attempts: status === 'sent' ? 1 : 0 } },
    );
  }

  return {
    /** The delivery is under way: listed as pending from now on. */
    async open(key: ApprovalDeliveryKey): Promise<void> {
      await pauses.mark({ _id: key.pauseId, run_id: key.runId });
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
      const marked = [...(await pauses.marked(pauseIds))];
      const found = await Promise.all(
        marked.flatMap((pauseId) =>
          APPROVAL_NOTICES.map((notice) =>
            findNumbered(ApprovalDelivery, (n) => approvalDeliveryId(pauseId, notice, n)),
          ),
        ),
      );
      const docs = found
        .flat()
        .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a._id.localeCompare(b._id));
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
      await ApprovalDeliveryPause.deleteMany({ run_id: trusted({ $in: ids }) });
    },
  };
}

/**
 * Marks the pauses whose messages were recorded without a mark (by a version before marks, or an
 * older worker still running): one scan of `approval_deliveries` as an api starts.
 */
export async function markPausesWithDeliveries(models: Models): Promise<void> {
  await markOwnersOf(
    models.ApprovalDelivery,
    { pause_id: 1, run_id: 1, workspace_id: 1 },
    models.ApprovalDeliveryPause,
    (d) => ({ _id: d.pause_id, run_id: d.run_id, ...(d.workspace_id ? { workspace_id: d.workspace_id } : {}) }),
  );
}

export type ApprovalDeliveries = ReturnType<typeof createApprovalDeliveries>;
