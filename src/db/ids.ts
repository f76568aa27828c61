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

/** Atomically reserves the next number of a counter. */
export async function nextSequence(conn: Connection, kind: IdKind): Promise<number> {
  const counters = conn.collection<CounterDoc>('counters');
  const doc = await counters.findOneAndUpdate({ _id: kind }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after' });
  if (!doc) throw new Error(`counter ${kind} was not returned`);
  return doc.seq;
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
