import { createHmac, timingSafeEqual } from 'node:crypto';

/** Who made a request, as far as the gate or the handler knew: ids and how they proved it, never a credential. */
export interface AuditActor {
  user_id: string | null;
  key_id: string | null;
  via: string;
}

export interface AuditTarget {
  type: string;
  id: string | null;
}

/** What one entry records. */
export interface AuditFields {
  time: Date;
  actor: AuditActor;
  action: string;
  target: AuditTarget;
  /** The HTTP status answered. */
  outcome: number;
  request_id: string;
  ip: string;
}

/** An entry as stored: its fields, its place in the chain, and the MAC that ties it to the one before. */
export interface ChainedEntry extends AuditFields {
  _id: string;
  seq: number;
  mac: string;
}

/** The id of the entry at `seq`: a deleted entry can still be named. */
export const auditEntryId = (seq: number): string => `AE${seq}`;

/**
 * The chain's arithmetic. Each entry's `mac` is an HMAC-SHA256, under a key derived from the
 * server's secret key, of a canonical encoding of the entry (its id and seq included) followed by
 * the previous entry's mac (the first entry's: empty). Someone who can write the database but does
 * not hold SPUR_SECRET_KEY can neither change an entry, nor remove one, nor reorder them, without
 * breaking the chain at that point; the head's own MAC (`headMac`) makes removing the newest entries
 * show too.
 */
export function auditChain(secretKey: Buffer) {
  // Its own key: a MAC of the trail is no use against anything else SPUR_SECRET_KEY protects.
  const key = createHmac('sha256', secretKey).update('spur audit trail v1').digest();
  const mac = (text: string) => createHmac('sha256', key).update(text).digest('base64url');

  /** A fixed order of fixed types: the same entry always encodes to the same text. Throws on a malformed entry. */
  function canonical(e: Omit<ChainedEntry, 'mac'>): string {
    return JSON.stringify([
      1,
      e._id,
      e.seq,
      new Date(e.time).toISOString(),
      e.actor.user_id ?? null,
      e.actor.key_id ?? null,
      e.actor.via,
      e.action,
      e.target.type,
      e.target.id ?? null,
      e.outcome,
      e.request_id,
      e.ip,
    ]);
  }

  return {
    entryMac: (entry: Omit<ChainedEntry, 'mac'>, previousMac: string): string =>
      mac(`${canonical(entry)}\n${previousMac}`),
    headMac: (seq: number, entryMac: string): string => mac(JSON.stringify(['head', seq, entryMac])),
    /** Whether the stored entry is the one written after `previousMac` (false for any malformed one). */
    entryHolds(entry: ChainedEntry, previousMac: string): boolean {
      try {
        return same(entry.mac, mac(`${canonical(entry)}\n${previousMac}`));
      } catch {
        return false;
      }
    },
    same,
  };
}

export type AuditChain = ReturnType<typeof auditChain>;

function same(a: unknown, b: string): boolean {
  if (typeof a !== 'string') return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
