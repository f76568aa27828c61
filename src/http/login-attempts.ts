import { isIP, isIPv4, isIPv6 } from 'node:net';
import type { Context } from 'koa';

export interface LoginAttemptLimits {
  /** Failed logins one client may make within `windowMs`; after that every attempt is refused. */
  maxFailures: number;
  windowMs: number;
}

export interface LoginAttempts {
  /** Seconds until the client may try again, or 0 when it may try now. */
  retryAfterSeconds(client: string): number;
  /** Counts a failed login of the client. */
  failed(client: string): void;
}

/** Clients remembered at once; past it the longest-unseen one is forgotten (memory stays bounded). */
const MAX_CLIENTS = 10_000;

/**
 * Failed logins per client address over a sliding window, in this process's memory: each api
 * replica counts on its own (N replicas allow up to N × the limit), and a restart forgets. While a
 * client is over the limit, even the right key is refused: otherwise a guess that succeeds would
 * still tell itself apart, and the limit would not slow guessing at all. Attempts refused by the
 * limit are not counted, so a client may try again once its oldest failure leaves the window.
 */
export function loginAttempts(limits: LoginAttemptLimits, clock: () => number = Date.now): LoginAttempts {
  const failures = new Map<string, number[]>();

  /** The client's failures still inside the window (older ones are dropped). */
  function recent(key: string, now: number): number[] {
    const times = (failures.get(key) ?? []).filter((t) => t > now - limits.windowMs);
    if (times.length === 0) failures.delete(key);
    else failures.set(key, times);
    return times;
  }

  return {
    retryAfterSeconds(client) {
      const now = clock();
      const times = recent(clientKey(client), now);
      if (times.length < limits.maxFailures) return 0;
      // The failure whose leaving brings the count under the limit.
      const freeing = times[times.length - limits.maxFailures] ?? now;
      return Math.max(1, Math.ceil((freeing + limits.windowMs - now) / 1000));
    },
    failed(client) {
      const now = clock();
      const key = clientKey(client);
      const times = recent(key, now);
      failures.delete(key);
      failures.set(key, [...times, now].slice(-limits.maxFailures));
      if (failures.size > MAX_CLIENTS) {
        for (const k of [...failures.keys()]) recent(k, now);
        // Still full: forget the client whose last failure is oldest (the map keeps that order).
        const oldest = failures.keys().next();
        if (failures.size > MAX_CLIENTS && !oldest.done) failures.delete(oldest.value);
      }
    },
  };
}

/**
 * The address a request's failed logins count against: the connection's peer (`app.proxy` is off,
 * so nothing a client writes in a header moves it), or, when the operator says every request comes
 * through one reverse proxy, the last `X-Forwarded-For` entry, the one that proxy appended.
 */
export function clientAddressOf(trustForwardedFor: boolean): (ctx: Context) => string {
  return (ctx) => {
    const peer = ctx.req.socket.remoteAddress ?? '';
    if (!trustForwardedFor) return peer;
    const last = ctx.get('x-forwarded-for').split(',').pop()?.trim() ?? '';
    return isIP(last) ? last : peer;
  };
}

/**
 * What the limit counts per: an IPv4 address, or an IPv6 /64 (one host commonly holds a whole /64,
 * so counting single IPv6 addresses would let it try 2^64 times as often). IPv4-mapped IPv6
 * addresses count as their IPv4 address.
 */
export function clientKey(address: string): string {
  const plain = address.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain);
  if (mapped?.[1]) return mapped[1];
  if (isIPv4(plain) || !isIPv6(plain)) return plain;
  return `${expandIPv6(plain).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, in lower-case hex without leading zeros. */
function expandIPv6(address: string): string[] {
  const [head = '', tail] = address.toLowerCase().split('::');
  const groups = (part: string | undefined) =>
    (part ? part.split(':') : []).flatMap((g) => (g.includes('.') ? ipv4Groups(g) : [g]));
  const left = groups(head);
  const right = groups(tail);
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => Number.parseInt(g, 16).toString(16));
}

function ipv4Groups(dotted: string): string[] {
  const [a = 0, b = 0, c = 0, d = 0] = dotted.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
