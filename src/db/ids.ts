import type { Connection } from 'mongoose';

/** PySpur's id prefixes: a per-collection counter behind a fixed prefix, never reused. */
export const ID_PREFIX = {
  workflow: 'S',
  workflowVersion: 'SV',
  run: 'R',
  task: 'T',
  dataset: 'DS',
  outputFile: 'OF',
} as const;
export type IdKind = keyof typeof ID_PREFIX;

const DUPLICATE_KEY = 11000;
const MAX_ATTEMPTS = 20;

interface CounterDoc {
  _id: string;
  seq: number;
}

/** Per connection and counter: the tail of the chain of increments in flight. */
const counterQueues = new WeakMap<Connection, Map<IdKind, Promise<unknown>>>();

/**
 * Reserves the next number of a counter. FerretDB v1 applies `$inc` as read-then-write, so
 * concurrent increments lose updates (measured: 300 concurrent `$inc` → 30 distinct values).
 * Increments are therefore chained one at a time within a process; across processes a repeated
 * number is caught by the `_id` uniqueness of the insert that uses it (see insertWithNewId).
 */
export function nextSequence(conn: Connection, kind: IdKind, count = 1): Promise<number> {
  let queues = counterQueues.get(conn);
  if (!queues) counterQueues.set(conn, (queues = new Map()));
  const previous = queues.get(kind) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => incrementCounter(conn, kind, count));
  queues.set(kind, next);
  return next;
}

async function incrementCounter(conn: Connection, kind: IdKind, count: number): Promise<number> {
  const counters = conn.collection<CounterDoc>('counters');
  for (let attempt = 0; ; attempt++) {
    try {
      const doc = await counters.findOneAndUpdate({ _id: kind }, { $inc: { seq: count } }, { upsert: true, returnDocument: 'after' });
      if (!doc) throw new Error(`counter ${kind} was not returned`);
      return doc.seq;
    } catch (err) {
      // Two first-ever upserts of one counter race on its _id; the loser increments the winner's.
      if (!isDuplicateKeyError(err) || attempt >= 3) throw err;
    }
  }
}

/** Reserves `count` consecutive ids at once (a run's task ids), returned in order. */
export async function reserveIds(conn: Connection, kind: IdKind, count: number): Promise<string[]> {
  if (count === 0) return [];
  const last = await nextSequence(conn, kind, count);
  return Array.from({ length: count }, (_, i) => `${ID_PREFIX[kind]}${last - count + 1 + i}`);
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
      if (!isDuplicateKeyError(err) || !(await idTaken(id))) throw err;
    }
  }
  throw new Error(`could not allocate a ${kind} id after ${MAX_ATTEMPTS} attempts`);
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
