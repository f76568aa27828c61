import { trusted } from 'mongoose';
import { insertWithNewId, isDuplicateKeyError } from './ids';
import type { EvalComparisonDoc, EvalResultDoc, EvalRunDoc, EvalSuiteDoc, Models } from './models';
import type { EvalRunStatus } from './models/eval-run.model';
import { isFinalStatus } from '../engine/statuses';

export type NewSuite = Omit<EvalSuiteDoc, '_id' | 'seq' | 'created_at' | 'updated_at'>;
export type NewEvalRun = Omit<EvalRunDoc, '_id' | 'seq' | 'status' | 'message' | 'start_time' | 'end_time'>;
export type NewEvalResult = Omit<EvalResultDoc, '_id' | 'scored_at'>;

/** The one writer of eval suites, eval runs, their scored examples and comparisons. */
export function createEvalRecords(models: Models) {
  const { EvalSuite, EvalRun, EvalResult, EvalComparison } = models;
  const taken = (model: { exists(f: { _id: string }): Promise<unknown> }) => async (id: string) =>
    (await model.exists({ _id: id })) !== null;

  return {
    async createSuite(fields: NewSuite, now: Date): Promise<EvalSuiteDoc> {
      return insertWithNewId(models.conn, 'evalSuite', taken(EvalSuite), async (id, seq) => {
        const doc = { _id: id, seq, ...fields, created_at: now, updated_at: now };
        await EvalSuite.create(doc);
        return doc;
      });
    },
    suite: (id: string) => EvalSuite.findById(id).lean<EvalSuiteDoc>(),
    suiteByName: (name: string) => EvalSuite.findOne({ name }).lean<EvalSuiteDoc>(),
    suites: () => EvalSuite.find().sort({ seq: 1 }).lean<EvalSuiteDoc[]>(),
    async removeSuite(id: string): Promise<boolean> {
      return (await EvalSuite.deleteOne({ _id: id })).deletedCount > 0;
    },

    async createRun(fields: NewEvalRun, now: Date): Promise<EvalRunDoc> {
      return insertWithNewId(models.conn, 'evalRun', taken(EvalRun), async (id, seq) => {
        const doc = {
          _id: id,
          seq,
          ...fields,
          status: 'PENDING' as const,
          message: null,
          start_time: now,
          end_time: null,
        };
        await EvalRun.create(doc);
        return doc;
      });
    },
    run: (id: string) => EvalRun.findById(id).lean<EvalRunDoc>(),
    runs: () => EvalRun.find().sort({ start_time: -1, seq: -1 }).lean<EvalRunDoc[]>(),
    /** A final status stays: a retried finish or a late RUNNING never overwrites it. */
    async setStatus(id: string, status: EvalRunStatus, message: string | null = null): Promise<void> {
      const run = await EvalRun.findById(id, { status: 1 }).lean<Pick<EvalRunDoc, 'status'>>();
      if (!run || isFinalStatus(run.status)) return;
      const end = isFinalStatus(status) ? { end_time: new Date() } : {};
      await EvalRun.updateOne({ _id: id }, { $set: { status, message, ...end } });
    },

    results: (evalRunId: string) =>
      EvalResult.find({ eval_run_id: evalRunId }).sort({ row: 1 }).lean<EvalResultDoc[]>(),
    async scoredRows(evalRunId: string): Promise<Set<number>> {
      const docs = await EvalResult.find({ eval_run_id: evalRunId }, { row: 1 }).lean<Array<{ row: number }>>();
      return new Set(docs.map((d) => d.row));
    },
    /** Stores scored examples; one stored by an earlier attempt is kept as it was. */
    async addResults(results: NewEvalResult[]): Promise<void> {
      const now = new Date();
      for (const r of results) {
        try {
          await EvalResult.create({ _id: `${r.eval_run_id}:${r.row}`, ...r, scored_at: now });
        } catch (err) {
          if (!isDuplicateKeyError(err)) throw err;
        }
      }
    },
    async removeResultsOf(evalRunIds: string[]): Promise<void> {
      await EvalResult.deleteMany({ eval_run_id: trusted({ $in: evalRunIds }) });
    },

    async createComparison(fields: Omit<EvalComparisonDoc, '_id' | 'seq' | 'created_at'>): Promise<EvalComparisonDoc> {
      return insertWithNewId(models.conn, 'evalComparison', taken(EvalComparison), async (id, seq) => {
        const doc = { _id: id, seq, ...fields, created_at: new Date() };
        await EvalComparison.create(doc);
        return doc;
      });
    },
    comparison: (id: string) => EvalComparison.findById(id).lean<EvalComparisonDoc>(),
    async setComparisonRuns(id: string, evalRunIds: string[]): Promise<void> {
      await EvalComparison.updateOne({ _id: id }, { $set: { eval_run_ids: evalRunIds } });
    },
  };
}

export type EvalRecords = ReturnType<typeof createEvalRecords>;
