import { trusted } from 'mongoose';
import { type AuditFields, type ChainedEntry, auditChain, auditEntryId } from './audit-chain';
import { isBusyError, isDuplicateKeyError } from './ids';
import type { Models } from './models';
import { type Page, pageBounds } from './paging';

export type { AuditActor, AuditFields, AuditTarget, ChainedEntry } from './audit-chain';

/** What a listing or an export keeps; each given field must match. */
export interface AuditFilter {
  /** A user id or a key id: entries whose actor is either. */
  actor?: string;
  action?: string;
  target_type?: string;
  target_id?: string;
  request_id?: string;
  /** From this time on (inclusive). */
  from?: Date;
  /** Before this time (exclusive). */
  to?: Date;
}

/** What verify found: every entry walked, and the first one changed or removed. */
export interface AuditVerdict {
  ok: boolean;
  entries: number;
  /** The first entry that was changed, or is missing (named by its seq, though it is gone). */
  first_bad_id?: string;
  /** What is wrong, in words. */
  detail?: string;
}

const HEAD = 'head';
/** Tries of one insert, when other api processes take the next number first or FerretDB is busy. */
const MAX_ATTEMPTS = 50;
const VERIFY_PAGE = 1000;
const EXPORT_PAGE = 500;
/** The head moves at most once in this long per process; entries appended meanwhile move it together. */
const HEAD_BATCH_MS = 200;

interface Tip {
  seq: number;
  mac: string;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The only writer of `audit_entries` and `audit_head`. Entries are appended, never changed: the
 * next entry takes the number after the newest (the unique `seq` makes a second writer of that
 * number fail, and it tries again after the new newest, so any number of api processes share one
 * chain), and its MAC covers the newest's. Then the head moves to it. Verify walks the chain in
 * pages, so its memory stays bounded however long the trail grows.
 */
export function createAuditTrail(models: Models, secretKey: Buffer) {
  const { AuditEntry, AuditHead } = models;
  const chain = auditChain(secretKey);
  /** The newest entry this process knows of; null: read it again. */
  let tip: Tip | null = null;
  /** This process's inserts, one after another: racing itself would only cost retries. */
  let queue: Promise<unknown> = Promise.resolve();
  /** Appends are numbered as they come; one that fails fails those already waiting behind it. */
  let issued = 0;
  let failed: { through: number; err: unknown } | null = null;
  /** The newest entry whose head move has not started, and the move under way (one at a time). */
  let headWanted: Tip | null = null;
  let headMoving: Promise<void> | null = null;
  /** When the last head move started (ms since the epoch). */
  let lastMoveAt = 0;

  const headHolds = (head: { seq: number; mac: string; head_mac: string }) =>
    chain.same(head.head_mac, chain.headMac(head.seq, head.mac));

  async function readTip(): Promise<Tip> {
    const [newest, head] = await Promise.all([
      AuditEntry.findOne({}, { seq: 1, mac: 1 }).sort({ seq: -1 }).lean<Tip>(),
      AuditHead.findById(HEAD).lean<{ seq: number; mac: string; head_mac: string }>(),
    ]);
    // Entries removed from the end leave a valid head past them: go on after the head, so the
    // gap stays where verify finds it instead of being filled with new entries.
    if (head && headHolds(head) && (!newest || head.seq > newest.seq)) return { seq: head.seq, mac: head.mac };
    return newest ? { seq: newest.seq, mac: newest.mac } : { seq: 0, mac: '' };
  }

  async function insertNext(fields: AuditFields): Promise<ChainedEntry> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      tip ??= await readTip();
      const seq = tip.seq + 1;
      const unsealed = { _id: auditEntryId(seq), seq, ...fields };
      const entry: ChainedEntry = { ...unsealed, mac: chain.entryMac(unsealed, tip.mac) };
      try {
        // Lean: the entry is built here, typed; Mongoose's documents and validation cost more than the insert.
        await AuditEntry.insertMany([entry], { lean: true });
        tip = { seq, mac: entry.mac };
        return entry;
      } catch (err) {
        tip = null;
        if (isBusyError(err)) await pause(10 * 2 ** Math.min(attempt, 5));
        else if (!isDuplicateKeyError(err)) throw err;
        // Another process took the number: read the newest again and follow it.
      }
    }
    throw new Error(`could not append to the audit trail after ${MAX_ATTEMPTS} attempts`);
  }

  /** Moves the head to the entry unless it is already there or past it (another process's newer one). */
  async function moveHead(seq: number, mac: string): Promise<void> {
    const head = { seq, mac, head_mac: chain.headMac(seq, mac) };
    for (let attempt = 0; attempt < 2; attempt++) {
      const moved = await AuditHead.updateOne({ _id: HEAD, seq: trusted({ $lt: seq }) }, { $set: head });
      if (moved.matchedCount > 0) return;
      try {
        await AuditHead.create({ _id: HEAD, ...head });
        return;
      } catch (err) {
        // The head exists: at or past this entry (done), or just created before it (once more).
        if (!isDuplicateKeyError(err)) throw err;
      }
    }
  }

  /**
   * Moves the head to the newest entry this process appended, beside the answer rather than before
   * it (an update costs FerretDB what ten inserts do): one move at a time, each to the newest entry
   * yet, and at most one every HEAD_BATCH_MS, so a process answering many requests pays one update
   * per 0.2 s, not one per request; the first entry after a quiet spell moves it at once.
   */
  function followHead(entry: Tip): void {
    if (!headWanted || entry.seq > headWanted.seq) headWanted = entry;
    headMoving ??= (async () => {
      try {
        while (headWanted !== null) {
          const early = lastMoveAt + HEAD_BATCH_MS - Date.now();
          if (early > 0) await pause(early);
          const next: Tip = headWanted;
          headWanted = null;
          lastMoveAt = Date.now();
          await moveHead(next.seq, next.mac);
        }
      } catch {
        // The next entry moves it further.
      } finally {
        headMoving = null;
      }
    })();
  }

  function queryOf(filter: AuditFilter): Record<string, unknown> {
    const query: Record<string, unknown> = {};
    if (filter.actor !== undefined) query.$or = [{ 'actor.user_id': filter.actor }, { 'actor.key_id': filter.actor }];
    if (filter.action !== undefined) query.action = filter.action;
    if (filter.target_type !== undefined) query['target.type'] = filter.target_type;
    if (filter.target_id !== undefined) query['target.id'] = filter.target_id;
    if (filter.request_id !== undefined) query.request_id = filter.request_id;
    if (filter.from || filter.to)
      query.time = trusted({ ...(filter.from ? { $gte: filter.from } : {}), ...(filter.to ? { $lt: filter.to } : {}) });
    return query;
  }

  return {
    /**
     * Appends an entry; resolves once it is stored. The head follows it within moments (a head
     * that could not move lags until the next entry moves it; it never fails the entry).
     */
    async append(fields: AuditFields): Promise<ChainedEntry> {
      const ticket = ++issued;
      const inserted = queue.then(async () => {
        // MongoDB just refused the one before (down, most likely): fail at once rather than each
        // waiting out its own timeout in turn, which would make the last of N wait N timeouts.
        if (failed && ticket <= failed.through) throw failed.err;
        try {
          return await insertNext(fields);
        } catch (err) {
          failed = { through: issued, err };
          throw err;
        }
      });
      queue = inserted.catch(() => undefined);
      const entry = await inserted;
      followHead(entry);
      return entry;
    },

    /** One page of the entries that match, newest first. */
    list(filter: AuditFilter, page: Page): Promise<ChainedEntry[]> {
      const { skip, limit } = pageBounds(page);
      return AuditEntry.find(queryOf(filter)).sort({ seq: -1 }).skip(skip).limit(limit).lean<ChainedEntry[]>();
    },

    /** Resolves once the head has followed every entry this process appended. */
    async headSettled(): Promise<void> {
      while (headMoving) await headMoving;
    },

    /** Every entry that matches, oldest first, a page at a time. */
    async *pages(filter: AuditFilter, pageSize = EXPORT_PAGE): AsyncGenerator<ChainedEntry[]> {
      const query = queryOf(filter);
      for (let after = 0; ;) {
        const page = await AuditEntry.find({ ...query, seq: trusted({ $gt: after }) })
          .sort({ seq: 1 })
          .limit(pageSize)
          .lean<ChainedEntry[]>();
        if (page.length > 0) yield page;
        const last = page.at(-1);
        if (!last || page.length < pageSize) return;
        after = last.seq;
      }
    },

    /**
     * Walks the whole chain, oldest first, `pageSize` entries at a time: each entry must follow the
     * one before it (no number missing), carry its own id and a MAC that holds over its fields and
     * the previous MAC; the head must be valid and no entry it has seen may be gone.
     */
    async verify(pageSize = VERIFY_PAGE): Promise<AuditVerdict> {
      const head = await AuditHead.findById(HEAD).lean<{ seq: number; mac: string; head_mac: string }>();
      let firstBad: { id?: string; detail: string } | null = null;
      const bad = (detail: string, id?: string) => {
        firstBad ??= { detail, ...(id ? { id } : {}) };
      };
      let entries = 0;
      let previous: Tip = { seq: 0, mac: '' };
      for (;;) {
        const page = await AuditEntry.find({ seq: trusted({ $gt: previous.seq }) })
          .sort({ seq: 1 })
          .limit(pageSize)
          .lean<ChainedEntry[]>();
        for (const entry of page) {
          entries++;
          const expected = previous.seq + 1;
          if (entry.seq !== expected) bad(`entry ${auditEntryId(expected)} is missing`, auditEntryId(expected));
          else if (entry._id !== auditEntryId(entry.seq) || !chain.entryHolds(entry, previous.mac))
            bad(`entry ${entry._id} was changed`, entry._id);
          if (head && entry.seq === head.seq && !chain.same(entry.mac, head.mac))
            bad(`entry ${entry._id} is not the one the head names`, entry._id);
          previous = { seq: entry.seq, mac: entry.mac };
        }
        if (page.length < pageSize) break;
      }
      if (head === null) {
        if (entries > 0) bad('the head is missing: the newest entries may have been removed');
      } else if (!headHolds(head)) bad('the head was changed');
      else if (head.seq > previous.seq)
        bad(`entries from ${auditEntryId(previous.seq + 1)} on are missing`, auditEntryId(previous.seq + 1));
      const found = firstBad as { id?: string; detail: string } | null;
      if (found === null) return { ok: true, entries };
      return { ok: false, entries, ...(found.id ? { first_bad_id: found.id } : {}), detail: found.detail };
    },
  };
}

export type AuditTrail = ReturnType<typeof createAuditTrail>;
