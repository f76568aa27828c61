import { trusted } from 'mongoose';
import type { TaskRecord } from '../engine/run-contract';
import type { Models } from './models';
import type { UsageDay, UsageRollupDoc } from './models/usage-rollup.model';
import { isDuplicateKeyError } from './ids';

export type UsageGroupBy = 'workflow' | 'model' | 'day' | 'api_key' | 'workspace';

/** The ledger's `api_key` of a run: who asked for it, or what started it when no client did. */
export function apiKeyLabel(run: { started_by?: string | null; trigger?: { kind: string } | null }): string {
  return run.started_by ?? run.trigger?.kind ?? 'none';
}

export interface UsageTotals {
  prompt_tokens: number;
  completion_tokens: number;
  calls: number;
  runs: number;
  /** Of priced calls only; `unpriced_calls` says how many calls had no price. */
  cost_nano_usd: number;
  unpriced_calls: number;
}

interface Tally extends Omit<UsageTotals, 'runs'> {
  runIds: Set<string>;
}

const emptyTally = (): Tally => ({
  prompt_tokens: 0,
  completion_tokens: 0,
  calls: 0,
  cost_nano_usd: 0,
  unpriced_calls: 0,
  runIds: new Set(),
});

/** One figure the totals add up: a ledger record, or one day of a deleted run's rollup. */
interface Entry {
  /** The run it counts as (a rollup counts as one run under its own id). */
  run: string;
  prompt_tokens: number;
  completion_tokens: number;
  calls: number;
  cost_nano_usd: number;
  unpriced_calls: number;
}

function add(t: Tally, e: Entry): void {
  t.prompt_tokens += e.prompt_tokens;
  t.completion_tokens += e.completion_tokens;
  t.calls += e.calls;
  t.cost_nano_usd += e.cost_nano_usd;
  t.unpriced_calls += e.unpriced_calls;
  t.runIds.add(e.run);
}

/** A record's figures: an unpriced record's calls count as unpriced, its cost as nothing. */
const entryOf = (doc: {
  run_id: string;
  prompt_tokens: number;
  completion_tokens: number;
  calls: number;
  cost_nano_usd?: number | null;
}): Entry => {
  const priced = doc.cost_nano_usd !== null && doc.cost_nano_usd !== undefined;
  return {
    run: doc.run_id,
    prompt_tokens: doc.prompt_tokens,
    completion_tokens: doc.completion_tokens,
    calls: doc.calls,
    cost_nano_usd: priced ? (doc.cost_nano_usd as number) : 0,
    unpriced_calls: priced ? 0 : doc.calls,
  };
};

const dayKey = (at: Date) => at.toISOString().slice(0, 10);
const startOfDay = (at: Date) => new Date(`${dayKey(at)}T00:00:00.000Z`);

const totalsOf = ({ runIds, ...t }: Tally): UsageTotals => ({ ...t, runs: runIds.size });

const groupKey: Record<
  Exclude<UsageGroupBy, 'day'>,
  (doc: { workflow_id: string; model: string; api_key?: string | null; workspace_id?: string }) => string
> = {
  workflow: (doc) => doc.workflow_id,
  model: (doc) => doc.model,
  api_key: (doc) => doc.api_key ?? 'none',
  workspace: (doc) => doc.workspace_id ?? 'default',
};

/** A task the ledger records: it ended, and called a model. */
export function billable(task: TaskRecord): boolean {
  return (task.status === 'COMPLETED' || task.status === 'FAILED') && task.usage?.models !== undefined;
}

/** The memo key of a written record: a record written again with other figures is written again. */
const writtenKey = (d: { _id: string; calls: number; cost_nano_usd: number | null }) =>
  `${d._id}:${d.calls}:${d.cost_nano_usd}`;

/** Records written by this process, so a run's later saves do not write its ended tasks again. */
const WRITTEN_LIMIT = 50_000;

/**
 * Writes the ledger (`usage_records`) from a run's task records: every ended task that called a
 * model, once per model. Idempotent (keyed by run, task and model), so a retried save or a second
 * worker writes the same documents; the ledger agrees with the tasks by construction.
 */
export function createUsageLedger(models: Models) {
  const { UsageRecord, UsageRollup } = models;
  const written = new Set<string>();

  return {
    async record(
      runs: readonly { runId: string; workflowId: string; apiKey: string; tasks: readonly TaskRecord[] }[],
    ): Promise<void> {
      const docs = runs.flatMap(({ runId, workflowId, apiKey, tasks }) =>
        tasks.flatMap((task) => {
          if (!billable(task)) return [];
          return (task.usage?.models ?? []).map((m) => ({
            _id: `${runId}:${task.id}:${m.model}`,
            run_id: runId,
            workflow_id: workflowId,
            api_key: apiKey,
            node_id: task.node_id,
            model: m.model,
            prompt_tokens: m.prompt_tokens,
            completion_tokens: m.completion_tokens,
            calls: m.calls,
            cost_nano_usd: m.cost_nano_usd,
            at: new Date(task.end_time ?? Date.now()),
          }));
        }),
      );
      const fresh = docs.filter((d) => !written.has(writtenKey(d)));
      if (fresh.length === 0) return;
      await UsageRecord.bulkWrite(
        fresh.map((doc) => ({ replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } })),
        { ordered: false },
      );
      if (written.size > WRITTEN_LIMIT) written.clear();
      for (const d of fresh) written.add(writtenKey(d));
    },

    /**
     * Totals of the records whose task ended in [from, to), per group, and over all; deleted runs
     * count through their rollups, by the day their tasks ended (a range that starts or ends
     * within a day counts their whole day or none of it).
     */
    async totals(
      groupBy: UsageGroupBy,
      range: { from?: Date; to?: Date },
    ): Promise<{ groups: (UsageTotals & { key: string })[]; total: UsageTotals }> {
      const at = { ...(range.from ? { $gte: range.from } : {}), ...(range.to ? { $lt: range.to } : {}) };
      // Operators in a filter are refused unless marked as the code's own (sanitizeFilter).
      const ranged = range.from || range.to;
      const groups = new Map<string, Tally>();
      const total = emptyTally();
      const count = (key: string, entry: Entry) => {
        let tally = groups.get(key);
        if (!tally) groups.set(key, (tally = emptyTally()));
        add(tally, entry);
        add(total, entry);
      };
      for await (const doc of UsageRecord.find(ranged ? { at: trusted(at) } : {})
        .lean()
        .cursor())
        count(groupBy === 'day' ? dayKey(doc.at) : groupKey[groupBy](doc), entryOf(doc));
      const inRange = (day: Date) => (!range.from || day >= range.from) && (!range.to || day < range.to);
      for await (const doc of UsageRollup.find().lean<UsageRollupDoc[]>().cursor())
        for (const day of doc.days)
          if (inRange(day.day))
            count(groupBy === 'day' ? dayKey(day.day) : groupKey[groupBy]({ ...doc, model: day.model }), {
              ...day,
              run: `rollup:${doc._id}`,
            });
      return {
        groups: [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([key, t]) => ({ key, ...totalsOf(t) })),
        total: totalsOf(total),
      };
    },

    /**
     * Sums each run's records per UTC day and model into its rollup (`tag`: the run's digest, the
     * rollup's id), before the run is deleted. Written once: a rollup already there is the one an
     * earlier attempt wrote from all of the run's records, so it stands.
     */
    async rollUp(runs: readonly { runId: string; tag: string }[]): Promise<void> {
      for (const { runId, tag } of runs) {
        const records = await UsageRecord.find({ run_id: runId }).lean();
        const first = records[0];
        if (!first || (await UsageRollup.exists({ _id: tag }))) continue;
        const days = new Map<string, UsageDay>();
        for (const record of records) {
          const key = `${dayKey(record.at)}|${record.model}`;
          const entry = entryOf(record);
          const day = days.get(key) ?? { day: startOfDay(record.at), model: record.model, ...NOTHING };
          for (const figure of FIGURES) day[figure] += entry[figure];
          days.set(key, day);
        }
        const rollup = { _id: tag, workflow_id: first.workflow_id, api_key: first.api_key, days: [...days.values()] };
        await UsageRollup.create(rollup).catch((err: unknown) => {
          if (!isDuplicateKeyError(err)) throw err;
        });
      }
    },

    /** The records of deleted runs (rolled up first). */
    async removeOfRuns(runIds: readonly string[]): Promise<void> {
      if (runIds.length > 0) await UsageRecord.deleteMany({ run_id: trusted({ $in: runIds }) });
    },
  };
}

const FIGURES = ['prompt_tokens', 'completion_tokens', 'calls', 'cost_nano_usd', 'unpriced_calls'] as const;
const NOTHING = { prompt_tokens: 0, completion_tokens: 0, calls: 0, cost_nano_usd: 0, unpriced_calls: 0 };

export type UsageLedger = ReturnType<typeof createUsageLedger>;
