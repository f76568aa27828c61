import { trusted } from 'mongoose';
import type { BatchAnswer, BatchLine } from '../engine/provider-batch-plan';
import { rowCustomId } from '../engine/provider-batch-plan';
import type { ExecuteNodeResult } from '../engine/run-contract';
import { insertIgnoringDuplicates } from './ids';
import { fromJsonText, toJsonText } from './json-text';
import type { Models, ProviderBatchDoc } from './models';

/** A provider-batch row between rounds (provider-batch.model.ts). */
export interface RowMemo {
  done: Record<string, ExecuteNodeResult>;
  held: Record<string, Record<string, unknown>>;
  answers: Record<string, BatchAnswer>;
}

export const EMPTY_MEMO: RowMemo = { done: {}, held: {}, answers: {} };

/**
 * A provider-batch run's rows between rounds are written once and never updated (FerretDB v1
 * updates are read-then-write, and a bulk of them stalled it): a row that holds requests at the
 * end of a round gets a record of that round, each answer a record of its own.
 */

/** A provider batch as a run's record shows it. */
export interface ProviderBatchView {
  round: number;
  node_id: string;
  provider: string;
  batch_id: string | null;
  status: string;
  requests: number;
  succeeded: number;
  failed: number;
  created_at: Date | null;
  ended_at: Date | null;
}

/** Rows per insert of memos or answers. */
const WRITE_SLICE = 500;

export const providerBatchKey = (batchRunId: string, nodeId: string, round: number) =>
  `${batchRunId}/${nodeId}/${round}`;

/** The provider batches of a provider-batch run and its rows' state between rounds. */
export function createProviderBatchRecords(models: Models) {
  const { ProviderBatch, ProviderBatchRow, ProviderBatchAnswer } = models;

  const sliced = async <T>(items: T[], write: (slice: T[]) => Promise<unknown>) => {
    for (let i = 0; i < items.length; i += WRITE_SLICE) await write(items.slice(i, i + WRITE_SLICE));
  };

  return {
    /**
     * The memos rows [start, end) start `round` with: what the rows that held requests in the
     * round before did, and every answer they have had (absent rows: nothing done yet).
     */
    async memos(batchRunId: string, round: number, start: number, end: number): Promise<Map<number, RowMemo>> {
      const memos = new Map<number, RowMemo>();
      if (round === 0) return memos;
      const range = trusted({ $gte: start, $lt: end });
      const docs = await ProviderBatchRow.find({ batch_run_id: batchRunId, round: round - 1, row: range }).lean();
      for (const d of docs)
        memos.set(d.row, { done: fromJsonText<RowMemo['done']>(d.done) ?? {}, held: {}, answers: {} });
      for (const a of await ProviderBatchAnswer.find({ batch_run_id: batchRunId, row: range }).lean()) {
        const memo = memos.get(a.row);
        if (memo) memo.answers[a.node_id] = fromJsonText<BatchAnswer>(a.answer) as BatchAnswer;
      }
      return memos;
    },

    /** Rows that hold requests at the end of `round`: what they did and what they hold (once: a retry's copy is ignored). */
    async saveHeld(batchRunId: string, round: number, rows: Array<{ row: number; memo: RowMemo }>): Promise<void> {
      await sliced(rows, (slice) =>
        insertIgnoringDuplicates(
          ProviderBatchRow,
          slice.map(({ row, memo }) => ({
            _id: `${batchRunId}/${row}/${round}`,
            batch_run_id: batchRunId,
            row,
            round,
            done: toJsonText(memo.done),
            held: toJsonText(memo.held),
          })),
        ),
      );
    },

    /** The requests held at the end of `round`, by node, as batch lines in row order. */
    async heldByNode(batchRunId: string, round: number): Promise<Map<string, BatchLine[]>> {
      const docs = await ProviderBatchRow.find({ batch_run_id: batchRunId, round }, { row: 1, held: 1 }).lean();
      const byNode = new Map<string, BatchLine[]>();
      for (const d of docs.sort((a, b) => a.row - b.row))
        for (const [nodeId, body] of Object.entries(fromJsonText<RowMemo['held']>(d.held) ?? {})) {
          const lines = byNode.get(nodeId) ?? [];
          lines.push({ custom_id: rowCustomId(d.row), body });
          byNode.set(nodeId, lines);
        }
      return byNode;
    },

    /**
     * The answers of one node's batch, for the rows that held its requests in `round` (a row the
     * provider never answered gets `missing`). Inserted once: a retry's copies are ignored.
     */
    async storeAnswers(
      batchRunId: string,
      round: number,
      nodeId: string,
      answers: ReadonlyMap<string, BatchAnswer>,
      missing: BatchAnswer,
    ): Promise<void> {
      const lines = (await this.heldByNode(batchRunId, round)).get(nodeId) ?? [];
      const docs = lines.map((line) => {
        const row = Number(line.custom_id.slice(line.custom_id.indexOf('-') + 1));
        return {
          _id: `${batchRunId}/${row}/${nodeId}`,
          batch_run_id: batchRunId,
          row,
          node_id: nodeId,
          answer: toJsonText(answers.get(line.custom_id) ?? missing),
        };
      });
      await sliced(docs, (slice) => insertIgnoringDuplicates(ProviderBatchAnswer, slice));
    },

    /**
     * The batch record for a node's round, made (with `creating_since` now) if it is not there
     * yet; `earlier`: it was there (an earlier try got as far as asking the provider).
     */
    async claim(
      batchRunId: string,
      nodeId: string,
      round: number,
      provider: string,
      requests: number,
    ): Promise<{ doc: ProviderBatchDoc; earlier: boolean }> {
      const _id = providerBatchKey(batchRunId, nodeId, round);
      const found = await ProviderBatch.findById(_id).lean<ProviderBatchDoc>();
      if (found) return { doc: found, earlier: true };
      const doc: ProviderBatchDoc = {
        _id,
        batch_run_id: batchRunId,
        node_id: nodeId,
        round,
        provider,
        requests,
        creating_since: new Date(),
        status: 'creating',
        succeeded: 0,
        failed: 0,
      };
      await insertIgnoringDuplicates(ProviderBatch, [doc]);
      return { doc: (await ProviderBatch.findById(_id).lean<ProviderBatchDoc>()) ?? doc, earlier: false };
    },

    async created(key: string, batchId: string): Promise<void> {
      await ProviderBatch.updateOne(
        { _id: key },
        { $set: { batch_id: batchId, status: 'created', created_at: new Date() } },
      );
    },

    async polled(
      key: string,
      state: { status: string; ended: boolean; succeeded: number; failed: number },
    ): Promise<void> {
      const { ended, ...fields } = state;
      await ProviderBatch.updateOne({ _id: key }, { $set: { ...fields, ...(ended ? { ended_at: new Date() } : {}) } });
    },

    async ofRound(batchRunId: string, round: number): Promise<ProviderBatchDoc[]> {
      return ProviderBatch.find({ batch_run_id: batchRunId, round }).lean<ProviderBatchDoc[]>();
    },

    /** A run's provider batches, in the order they were made. */
    async ofRun(batchRunId: string): Promise<ProviderBatchView[]> {
      const docs = await ProviderBatch.find({ batch_run_id: batchRunId }).lean<ProviderBatchDoc[]>();
      return docs
        .sort((a, b) => a.round - b.round || a.node_id.localeCompare(b.node_id))
        .map((d) => ({
          round: d.round,
          node_id: d.node_id,
          provider: d.provider,
          batch_id: d.batch_id ?? null,
          status: d.status ?? 'creating',
          requests: d.requests,
          succeeded: d.succeeded ?? 0,
          failed: d.failed ?? 0,
          created_at: d.created_at ?? null,
          ended_at: d.ended_at ?? null,
        }));
    },

    /** The rows' state, once the batch has ended (its provider batches stay, as its record). */
    async removeRows(batchRunId: string): Promise<void> {
      await ProviderBatchRow.deleteMany({ batch_run_id: batchRunId });
      await ProviderBatchAnswer.deleteMany({ batch_run_id: batchRunId });
    },

    /** Everything of these runs (a run erased). */
    async removeOfRuns(runIds: string[]): Promise<void> {
      if (runIds.length === 0) return;
      await ProviderBatchRow.deleteMany({ batch_run_id: trusted({ $in: runIds }) });
      await ProviderBatchAnswer.deleteMany({ batch_run_id: trusted({ $in: runIds }) });
      await ProviderBatch.deleteMany({ batch_run_id: trusted({ $in: runIds }) });
    },
  };
}

export type ProviderBatchRecords = ReturnType<typeof createProviderBatchRecords>;
