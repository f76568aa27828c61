import { createHmac, timingSafeEqual } from 'node:crypto';

/** Stripe's default: a delivery signed more than five minutes from now (either way) is refused. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** `t=<unix seconds>` and one or more `v1=<hex>` (several while the sender rolls its secret); others ignored. */
function parseHeader(presented: string): { t: number; v1: string[] } | null {
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of presented.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) v1.push(value);
  }
  return t === null || v1.length === 0 ? null : { t, v1 };
}

/**
 * Whether a Stripe-style header (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`)
 * signs these bytes now: the timestamp is inside the HMAC, so a recorded delivery replayed later
 * (or one dated ahead) is refused once it is over `toleranceSeconds` from this server's clock.
 */
export function timestampedSignatureMatches(
  secret: string,
  raw: Buffer,
  presented: string,
  toleranceSeconds: number,
  nowMs: number,
): boolean {
  const header = parseHeader(presented);
  if (!header) return false;
  if (Math.abs(nowMs / 1000 - header.t) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${header.t}.`).update(raw).digest();
  // Every candidate is compared, so the time taken says nothing about which one (if any) matched.
  return header.v1.map((v) => timingSafeEqual(Buffer.from(v, 'hex'), expected)).includes(true);
}
