import { trusted } from 'mongoose';
import type { TaskRecord } from '../engine/run-contract';
import type { Models } from './models';

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

function add(
  t: Tally,
  doc: {
    run_id: string;
    prompt_tokens: number;
    completion_tokens: number;
    calls: number;
    cost_nano_usd?: number | null;
  },
): void {
  t.prompt_tokens += doc.prompt_tokens;
  t.completion_tokens += doc.completion_tokens;
  t.calls += doc.calls;
  if (doc.cost_nano_usd === null || doc.cost_nano_usd === undefined) t.unpriced_calls += doc.calls;
  else t.cost_nano_usd += doc.cost_nano_usd;
  t.runIds.add(doc.run_id);
}

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
  const { UsageRecord } = models;
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

    /** Totals of the records whose task ended in [from, to), per group, and over all. */
    async totals(
      groupBy: UsageGroupBy,
      range: { from?: Date; to?: Date },
    ): Promise<{ groups: (UsageTotals & { key: string })[]; total: UsageTotals }> {
      const at = { ...(range.from ? { $gte: range.from } : {}), ...(range.to ? { $lt: range.to } : {}) };
      // Operators in a filter are refused unless marked as the code's own (sanitizeFilter).
      const filter = range.from || range.to ? { at: trusted(at) } : {};
      const groups = new Map<string, Tally>();
      const total = emptyTally();
      for await (const doc of UsageRecord.find(filter).lean().cursor()) {
        const key = groupBy === 'day' ? doc.at.toISOString().slice(0, 10) : groupKey[groupBy](doc);
        let tally = groups.get(key);
        if (!tally) groups.set(key, (tally = emptyTally()));
        add(tally, doc);
        add(total, doc);
      }
      return {
        groups: [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([key, t]) => ({ key, ...totalsOf(t) })),
        total: totalsOf(total),
      };
    },
  };
}

export type UsageLedger = ReturnType<typeof createUsageLedger>;
