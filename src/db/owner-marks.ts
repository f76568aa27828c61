import type { Model } from 'mongoose';
import { insertIgnoringDuplicates } from './ids';

/**
 * FerretDB v1 answers any filter but an `_id` lookup by scanning the whole collection, so records
 * found by their owner (a run's failed attempts, a pause's approval messages) cost every read in
 * proportion to every owner's records. Instead an owner with any is marked (`_id` the owner's, in
 * a collection of its own), its records carry ids numbered from 1 without gaps, and a read looks
 * up the mark, then a marked owner's records, each by `_id`.
 */

/** A mark: the owner's id (and whatever a removal finds it by). */
export interface MarkDoc {
  _id: string;
}

/**
 * Records looked up at once after the first is found: most owners have one or none, and a window
 * keeps a long list from costing one round trip per record.
 */
const LOOKUP_WINDOW = 4;

/** The records numbered 1, 2, … under `idOf`, while found. */
export async function findNumbered<T>(model: Model<T>, idOf: (n: number) => string): Promise<T[]> {
  const found: T[] = [];
  for (let next = 1, window = 1; ; next += window, window = LOOKUP_WINDOW) {
    const docs = await Promise.all(
      Array.from({ length: window }, (_, i) => model.findById(idOf(next + i)).lean<T>() as Promise<T | null>),
    );
    for (const d of docs) {
      if (!d) return found;
      found.push(d);
    }
  }
}

export function ownerMarks<M extends MarkDoc>(marks: Model<M>) {
  return {
    /** Marks the owner before its first record is written: a reader that finds a mark may find no record yet, never the reverse. */
    mark: (mark: M): Promise<void> => insertIgnoringDuplicates(marks, [mark]),
    /** Which of these owners are marked (one `_id` lookup each, at once). */
    async marked(ids: readonly string[]): Promise<Set<string>> {
      const found = await Promise.all(ids.map((id) => marks.exists({ _id: id })));
      return new Set(ids.filter((_, i) => found[i]));
    },
  };
}

/**
 * Marks the owners of records written without a mark (by a version before marks, or an older
 * worker still running): one scan of `records` as an api starts (prepare-database.ts). `markOf`
 * builds an owner's mark from one of its records (the workspace it belongs to included).
 */
export async function markOwnersOf<R, M extends MarkDoc>(
  records: Model<R>,
  fields: Record<string, 1>,
  marks: Model<M>,
  markOf: (record: R) => M,
): Promise<void> {
  const owners = new Map<string, M>();
  for await (const record of records.find({}, fields).lean<R[]>().cursor()) {
    const mark = markOf(record as R);
    owners.set(mark._id, mark);
  }
  // Only the missing: inserting every mark again costs FerretDB a refused insert per owner, every start.
  for await (const mark of marks.find({}, { _id: 1 }).lean<MarkDoc[]>().cursor()) owners.delete(mark._id);
  await insertIgnoringDuplicates(marks, [...owners.values()]);
}
