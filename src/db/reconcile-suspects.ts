import { trusted } from 'mongoose';
import { isDuplicateKeyError } from './ids';
import type { Models, ReconcileSuspectDoc } from './models';

/**
 * The only writer of `reconcile_suspects`: when the reconciler first found an open run's workflow
 * missing. Kept apart from the run's record, which only the run's own workflow writes (FerretDB v1
 * updates are read-then-write: a second writer could undo a field the workflow just wrote).
 */
export function createReconcileSuspects(models: Models) {
  const { ReconcileSuspect } = models;
  return {
    /** Since when each of these runs has been missing, for those that are suspects. */
    async of(runIds: string[]): Promise<Map<string, Date>> {
      if (runIds.length === 0) return new Map();
      const docs = await ReconcileSuspect.find({ _id: trusted({ $in: runIds }) }).lean<ReconcileSuspectDoc[]>();
      return new Map(docs.map((d) => [d._id, d.missing_since]));
    },
    async suspect(runId: string, at: Date): Promise<void> {
      await ReconcileSuspect.create({ _id: runId, missing_since: at }).catch((err: unknown) => {
        if (!isDuplicateKeyError(err)) throw err; // another pass recorded it first
      });
    },
    async clearAll(runIds: readonly string[]): Promise<void> {
      if (runIds.length > 0) await ReconcileSuspect.deleteMany({ _id: trusted({ $in: runIds }) });
    },
    async clear(runId: string): Promise<void> {
      await ReconcileSuspect.deleteOne({ _id: runId });
    },
  };
}
