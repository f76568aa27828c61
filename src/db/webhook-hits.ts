import { trusted } from 'mongoose';
import { isBusyError, isDuplicateKeyError } from './ids';
import type { Models } from './models';

/** How often a process removes old hits itself (where no TTL index does: FerretDB v1). */
const SWEEP_EVERY_MS = 60_000;
/** Hits are kept a little past their window; nothing reads them once it is over. */
const KEEP_AFTER_WINDOW_MS = 60_000;
const BUSY_RETRIES = 3;

/**
 * The only writer of `webhook_hits`: a fleet-wide limit on a trigger's requests per window. A window
 * has `allowed` slots, `<trigger>:<window>:<slot>`, and a request is let through when it inserts one:
 * the `_id` index lets each slot be taken once, by whichever api process asks first (inserts are
 * atomic on FerretDB v1 too, where `$inc` is read-then-write and would lose counts). A request starts
 * at the window's count, so a full window costs one count and no insert, and racing requests move on
 * to the next slot rather than all being refused.
 */
export function createWebhookHits(models: Models) {
  const { WebhookHit } = models;
  let lastSweep = 0;

  function sweepNowAndThen(now: number): void {
    if (now - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now;
    WebhookHit.deleteMany({ expires_at: trusted({ $lt: new Date(now) }) }).catch(() => undefined);
  }

  /** Inserts the slot's hit; false when another request holds it. */
  async function take(triggerId: string, window: number, windowMs: number, slot: number): Promise<boolean> {
    const doc = {
      _id: `${triggerId}:${window}:${slot}`,
      trigger_id: triggerId,
      window,
      expires_at: new Date(window + windowMs + KEEP_AFTER_WINDOW_MS),
    };
    for (let attempt = 0; ; attempt++) {
      try {
        await WebhookHit.create(doc);
        return true;
      } catch (err) {
        if (isDuplicateKeyError(err)) return false;
        if (!isBusyError(err) || attempt >= BUSY_RETRIES) throw err;
        await new Promise((r) => setTimeout(r, 10 * 2 ** attempt));
      }
    }
  }

  return {
    /** Whether a request may pass in the window starting at `window` (ms), which lets `allowed` through. */
    async admit(triggerId: string, window: number, windowMs: number, allowed: number, now: number): Promise<boolean> {
      sweepNowAndThen(now);
      const taken = await WebhookHit.countDocuments({ trigger_id: triggerId, window });
      for (let slot = taken; slot < allowed; slot++) if (await take(triggerId, window, windowMs, slot)) return true;
      return false;
    },
  };
}

export type WebhookHits = ReturnType<typeof createWebhookHits>;
