import { createHash } from 'node:crypto';
import { type Connection, trusted } from 'mongoose';
import type { Models } from '../../src/db/models';
import { AUDIT_COLLECTIONS } from './audit';

/** Collections and fields that move when nothing was changed: the audit trail, and when a user or key was last seen. */
export interface StateOptions {
  /** Left out whole (default: the audit trail, which records refusals too). */
  skipCollections?: readonly string[];
  /** Per collection, fields left out of each document (default: `last_seen_at` and `last_used_at` of users and keys). */
  skipFields?: Readonly<Record<string, readonly string[]>>;
  /** Only the documents matching this filter in every collection (e.g. by `workspace_id`); default: all. */
  filter?: Readonly<Record<string, unknown>>;
}

const DEFAULTS: Required<Omit<StateOptions, 'filter'>> = {
  skipCollections: AUDIT_COLLECTIONS,
  skipFields: { access_users: ['last_seen_at'], access_keys: ['last_used_at'] },
};

/** Every document of a database, each as a hash under `<collection>/<_id>`, and one digest of them all. */
export interface DatabaseState {
  digest: string;
  documents: ReadonlyMap<string, string>;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Reads every document of every collection (GridFS files too), sorted by `_id`, through the
 * driver: two equal digests mean nothing was created, changed or deleted in between.
 */
export async function databaseState(mongo: Connection, options: StateOptions = {}): Promise<DatabaseState> {
  const { skipCollections, skipFields, filter = {} } = { ...DEFAULTS, ...options };
  const db = mongo.db;
  if (!db) throw new Error('the connection is not open');
  const names = (await db.listCollections().toArray()).map((c) => c.name).sort();
  const documents = new Map<string, string>();
  for (const name of names.filter((n) => !skipCollections.includes(n))) {
    const docs = await db.collection(name).find(filter).sort({ _id: 1 }).toArray();
    for (const doc of docs) {
      for (const field of skipFields[name] ?? []) delete doc[field];
      documents.set(`${name}/${JSON.stringify(doc._id)}`, sha256(JSON.stringify(doc)));
    }
  }
  const digest = sha256(JSON.stringify([...documents]));
  return { digest, documents };
}

/** The documents created, changed or deleted between two states, as `<collection>/<_id> (created|changed|deleted)`. */
export function changedDocuments(before: DatabaseState, after: DatabaseState): string[] {
  const changes: string[] = [];
  for (const [id, hash] of after.documents) {
    const was = before.documents.get(id);
    if (was === undefined) changes.push(`${id} (created)`);
    else if (was !== hash) changes.push(`${id} (changed)`);
  }
  for (const id of before.documents.keys()) if (!after.documents.has(id)) changes.push(`${id} (deleted)`);
  return changes;
}

/** How many of `runIds` have their tasks stored: on their record, or in a document of their own (`run_tasks`). */
export async function runsWithStoredTasks(models: Models, runIds: readonly string[]): Promise<number> {
  const [onRecord, apart] = await Promise.all([
    models.Run.find({ _id: trusted({ $in: [...runIds] }) }, { tasks: 1 }).lean<
      { _id: string; tasks?: string | null }[]
    >(),
    models.RunTasks.find({ _id: trusted({ $in: [...runIds] }) }, { _id: 1 }).lean<{ _id: string }[]>(),
  ]);
  return new Set([...onRecord.filter((r) => typeof r.tasks === 'string'), ...apart].map((d) => d._id)).size;
}
