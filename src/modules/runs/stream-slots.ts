import type { Context } from 'koa';
import type { StreamLimits } from '../../config/settings';
import type { ApiCaller } from '../../http/api-keys';
import { clientKey } from '../../http/login-attempts';
import { metrics } from '../../metrics/metrics';

/** A slot taken: `release` frees it (any number of calls free it once). */
export interface StreamSlot {
  ok: true;
  release(): void;
}

/** No slot: the process's limit or the client's was reached. */
export interface StreamRefusal {
  ok: false;
  scope: 'server' | 'client';
  limit: number;
}

/**
 * The open event streams of this api process, counted in total and per client, so neither one
 * client nor many can hold more connections (and run watchers) than the operator allows. Only
 * clients with an open stream are remembered, so memory is bounded by the total limit.
 */
export function createStreamSlots(limits: StreamLimits) {
  const perClient = new Map<string, number>();
  let open = 0;

  const slots = {
    take(client: string): StreamSlot | StreamRefusal {
      const mine = perClient.get(client) ?? 0;
      if (mine >= limits.perClient) return { ok: false, scope: 'client', limit: limits.perClient };
      if (open >= limits.max) return { ok: false, scope: 'server', limit: limits.max };
      perClient.set(client, mine + 1);
      open++;
      let held = true;
      return {
        ok: true,
        release() {
          if (!held) return;
          held = false;
          open--;
          const left = (perClient.get(client) ?? 1) - 1;
          if (left > 0) perClient.set(client, left);
          else perClient.delete(client);
        },
      };
    },

    /** Streams open and clients holding them (for tests and the bench). */
    stats(): { open: number; clients: number } {
      return { open, clients: perClient.size };
    },
  };
  // Every event stream holds a slot while open: spur_event_streams reads them when scraped.
  metrics.eventStreams.track(slots, (mine) => [{ labels: {}, value: mine.stats().open }]);
  return slots;
}

export type StreamSlots = ReturnType<typeof createStreamSlots>;

/**
 * Who a stream counts against: the API key presented (its digest, set by the gate), else the
 * client's address as `/login` counts it (an IPv6 /64 as one; behind a trusted proxy, the address
 * it appended), so a browser session or a keyless dev instance is limited per machine.
 */
export function streamClientOf(addressOf: (ctx: Context) => string): (ctx: Context) => string {
  return (ctx) => {
    const digest = (ctx.state as ApiCaller).apiKeyDigest;
    return digest ? `key:${digest}` : `address:${clientKey(addressOf(ctx))}`;
  };
}
