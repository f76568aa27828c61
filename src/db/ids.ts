import type { Connection, Model } from 'mongoose';

/** PySpur's id prefixes: a per-collection counter behind a fixed prefix, never reused. */
export const ID_PREFIX = {
  workflow: 'S',
  workflowVersion: 'SV',
  run: 'R',
  task: 'T',
  dataset: 'DS',
  outputFile: 'OF',
  user: 'U',
  session: 'SN',
  message: 'M',
  ragCollection: 'DC',
  vectorIndex: 'VI',
  schedule: 'SC',
  webhookTrigger: 'TR',
  evalSuite: 'EV',
  evalRun: 'ER',
  evalComparison: 'EC',
  accessUser: 'UA',
  accessKey: 'K',
  workspace: 'WS',
  /** Only its counter: held deliveries are ordered by it within a millisecond. */
  heldDelivery: 'HD',
  runAction: 'RA',
} as const;
export type IdKind = keyof typeof ID_PREFIX;

const DUPLICATE_KEY = 11000;
const MAX_ATTEMPTS = 20;

interface CounterDoc {
  _id: string;
  seq: number;
}

/** Numbers a process takes per counter update (hi/lo allocation). */
const BLOCK_SIZE = 20;

interface Block {
  next: number;
  last: number;
}

/** Per connection and counter: the block being handed out, and the chain of calls in flight. */
const blocks = new WeakMap<Connection, Map<IdKind, Block>>();
const queues = new WeakMap<Connection, Map<IdKind, Promise<unknown>>>();

/**
 * The next number of a counter. Each process reserves blocks of BLOCK_SIZE numbers with one
 * `$inc` and hands them out in order, because on FerretDB v1 an update costs ~10× an insert
 * (measured: 20 ms vs 2 ms) and `$inc` is read-then-write (300 concurrent `$inc` → 30 distinct
 * values). Calls are chained within a process; across processes a number handed out twice is
 * caught by the `_id` uniqueness of the insert that uses it (insertWithNewId). Numbers left in a
 * block when a process stops are skipped, never reused.
 */
export function nextSequence(conn: Connection, kind: IdKind): Promise<number> {
  let perKind = queues.get(conn);
  if (!perKind) queues.set(conn, (perKind = new Map()));
  const previous = perKind.get(kind) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => takeNumber(conn, kind));
  perKind.set(kind, next);
  return next;
}

async function takeNumber(conn: Connection, kind: IdKind): Promise<number> {
  let perKind = blocks.get(conn);
  if (!perKind) blocks.set(conn, (perKind = new Map()));
  let block = perKind.get(kind);
  if (!block || block.next > block.last) {
    const last = await incrementCounter(conn, kind, BLOCK_SIZE);
    block = { next: last - BLOCK_SIZE + 1, last };
    perKind.set(kind, block);
  }
  return block.next++;
}

async function incrementCounter(conn: Connection, kind: IdKind, count: number): Promise<number> {
  const counters = conn.collection<CounterDoc>('counters');
  for (let attempt = 0; ; attempt++) {
    try {
      const doc = await counters.findOneAndUpdate(
        { _id: kind },
        { $inc: { seq: count } },
        { upsert: true, returnDocument: 'after' },
      );
      if (!doc) throw new Error(`counter ${kind} was not returned`);
      return doc.seq;
    } catch (err) {
      // Two first-ever upserts of one counter race on its _id; the loser increments the winner's.
      if (!isDuplicateKeyError(err) || attempt >= 3) throw err;
    }
  }
}

/**
 * PySpur's `T<n>` for a run's tasks without a counter of their own: the run's number followed by
 * the node's position (R12's third node is T12003), unique because run numbers are.
 */
export function taskIdFor(runSeq: number, index: number, taskCount: number): string {
  const width = Math.max(3, String(taskCount).length);
  return `${ID_PREFIX.task}${runSeq}${String(index + 1).padStart(width, '0')}`;
}

/**
 * Inserts a document under a fresh PySpur-style id. The document `_id` is the id, so a counter
 * that ever hands out a number twice (FerretDB v1 updates are read-then-write) shows up as a
 * duplicate key and is retried with the next number, never as two documents with one id.
 * FerretDB does not say which index a duplicate hit, so the `_id` is looked up to tell.
 */
export async function insertWithNewId<T>(
  conn: Connection,
  kind: IdKind,
  idTaken: (id: string) => Promise<boolean>,
  insert: (id: string, seq: number) => Promise<T>,
): Promise<T> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const seq = await nextSequence(conn, kind);
    const id = `${ID_PREFIX[kind]}${seq}`;
    try {
      return await insert(id, seq);
    } catch (err) {
      if (isBusyError(err)) {
        // FerretDB's SQLite refused the write under load ("database is locked"): back off, retry.
        await new Promise((r) => setTimeout(r, 25 * 2 ** Math.min(attempt, 5)));
        continue;
      }
      if (!isDuplicateKeyError(err) || !(await idTaken(id))) throw err;
    }
  }
  throw new Error(`could not allocate a ${kind} id after ${MAX_ATTEMPTS} attempts`);
}

/** SQLite's SQLITE_BUSY as FerretDB passes it on: transient, safe to retry. */
export function isBusyError(err: unknown): boolean {
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' && /database is locked|SQLITE_BUSY/.test(message);
}

/**
 * A unique index refused the write. MongoDB says E11000; FerretDB v1 says so on insert but passes
 * SQLite's "UNIQUE constraint failed" through on update.
 */
export function isDuplicateKeyError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  if (e.code === DUPLICATE_KEY) return true;
  return typeof e.message === 'string' && /E11000|UNIQUE constraint failed/.test(e.message);
}

/** An unordered bulk insert where a document already there (a retried write) is not an error. */
export async function insertIgnoringDuplicates<T>(model: Model<T>, docs: T[]): Promise<void> {
  if (docs.length === 0) return;
  try {
    await model.insertMany(docs, { ordered: false, lean: true });
  } catch (err) {
    const writeErrors = (err as { writeErrors?: unknown[] }).writeErrors;
    const all = Array.isArray(writeErrors) && writeErrors.length > 0 ? writeErrors : [err];
    if (!all.every((e) => isDuplicateKeyError((e as { err?: unknown }).err ?? e))) throw err;
  }
}
