import { randomUUID } from 'node:crypto';
import { trusted } from 'mongoose';
import type { Models } from './models';

/** How often a process removes old hits itself (where no TTL index does: FerretDB v1). */
const SWEEP_EVERY_MS = 60_000;
/** Hits are kept a little past their window, so a slow request still counts those before it. */
const KEEP_AFTER_WINDOW_MS = 60_000;

/**
 * The only writer of `webhook_hits`: a fleet-wide count of a trigger's requests per window. A request
 * records its hit and then counts the window's hits: every process sees every hit, and a request
 * counts itself and all recorded before it, so no more than the limit are ever let through (under
 * a race, one may be refused that a perfectly ordered count would have let in).
 */
export function createWebhookHits(models: Models) {
  const { WebhookHit } = models;
  let lastSweep = 0;

  function sweepNowAndThen(now: number): void {
    if (now - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now;
    WebhookHit.deleteMany({ expires_at: trusted({ $lt: new Date(now) }) }).catch(() => undefined);
  }

  return {
    /** Records one hit in the window starting at `window` (ms) and answers how many the window holds now. */
    async hitAndCount(triggerId: string, window: number, windowMs: number, now: number): Promise<number> {
      sweepNowAndThen(now);
      await WebhookHit.create({
        _id: randomUUID(),
        trigger_id: triggerId,
        window,
        expires_at: new Date(window + windowMs + KEEP_AFTER_WINDOW_MS),
      });
      return WebhookHit.countDocuments({ trigger_id: triggerId, window });
    },
  };
}

export type WebhookHits = ReturnType<typeof createWebhookHits>;
