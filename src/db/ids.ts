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
 */
export async function insertWithNewId<T>(
  conn: Connection,
  kind: IdKind,
  insert: (id: string, seq: number) => Promise<T>,
): Promise<T> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const seq = await nextSequence(conn, kind);
    try {
      return await insert(`${ID_PREFIX[kind]}${seq}`, seq);
    } catch (err) {
      if (!isDuplicateIdError(err)) throw err;
    }
  }
  throw new Error(`could not allocate a ${kind} id after ${MAX_ATTEMPTS} attempts`);
}

export function isDuplicateKeyError(err: unknown): boolean {
  return (err as { code?: unknown }).code === DUPLICATE_KEY;
}

function isDuplicateIdError(err: unknown): boolean {
  return duplicateKeyField(err) === '_id';
}

/** Name of the unique field a duplicate-key error is about (MongoDB and FerretDB word it differently). */
export function duplicateKeyField(err: unknown): string | undefined {
  if (!isDuplicateKeyError(err)) return undefined;
  const e = err as { keyPattern?: Record<string, unknown>; message?: string };
  if (e.keyPattern) return Object.keys(e.keyPattern)[0];
  return /index: (\w+?)_(?:-?1|\d)/.exec(e.message ?? '')?.[1];
}
