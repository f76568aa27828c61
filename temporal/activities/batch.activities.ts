import { exportRunSpan } from '../../src/telemetry/run-span';
import { defaultMaxListeners, setMaxListeners } from 'node:events';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { ForeignValueRefError, StoredRecordMissing, ValueTooLargeError } from '../../src/db/errors';
import { createOutputFiles } from '../../src/db/output-files';
import type { RowRecordBase, RunRepository } from '../../src/db/runs/run-repository';
import { createDatasetReader } from '../../src/db/dataset-reader';
import type { DatasetRow } from '../../src/db/dataset-row-chunks';
import {
  type BatchChildRow,
  type BatchChunkInput,
  type BatchRows,
  type BatchChunkResult,
  type BatchFinish,
  type BatchLinesInput,
  type PrepareBatchRowsInput,
  type RowOutcome,
  batchRowRunId,
  batchRowTaskIds,
  outcomeLine,
} from '../../src/contracts/batch-contract';
import type { DryRun } from '../../src/engine/dry-run';
import { planGraph } from '../../src/engine/graph';
import type { RunDefinition } from '../../src/engine/run-contract';
import { CANCELED_MESSAGE } from '../../src/engine/statuses';
import { type ChunkOutcome, ChunkFlusher, rowOutcome } from './batch-chunk-flusher';
import { type RowRunInput, rowBudget, runRowOrFail } from './batch-row';
import { EMPTY_MEMO, type RowMemo, createProviderBatchRecords } from '../../src/db/provider-batch-records';
import { providerBatchExecutor } from './provider-batch-rows';
import type { NodeActivityDeps } from './execute-node.activity';
import type { BulkPacer } from './bulk-pacer';

/** How often a chunk shows its progress: records, output lines, the parent's percentage. */
const FLUSH_EVERY_MS = 250;

/** A row's InputNode input: the cells of the columns the InputNode takes. */
export function rowInput(row: DatasetRow, columns: string[]): Record<string, unknown> {
  return Object.fromEntries(columns.map((c) => [c, row[c] ?? null]));
}

/**
 * The dataset or the output file was deleted while the batch ran: retrying cannot help, so the
 * batch fails saying which (instead of retrying forever).
 */
async function failIfGone<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof StoredRecordMissing)
      throw ApplicationFailure.nonRetryable(
        `${(err as Error).message} (deleted while the batch ran)`,
        'BatchInputGone',
      );
    throw err;
  }
}

export function createBatchActivities(deps: NodeActivityDeps, runs: RunRepository, pacer: BulkPacer) {
  const datasets = createDatasetReader(deps.models);
  const outputs = createOutputFiles(deps.models);
  const providerBatches = createProviderBatchRecords(deps.models);
  const rowValues = (runId: string, cells: Record<string, unknown>) => rowValuesOf(deps, runId, cells);

  return {
    async markBatchRunning(input: { parentRunId: string; total: number }): Promise<void> {
      await runs.setBatchProgress(input.parentRunId, { status: 'RUNNING', rows_total: input.total });
    },

    /** Child mode records rows a little ahead of starting them; a cancelled or failed batch never starts those. */
    async finishBatch(input: BatchFinish): Promise<void> {
      await runs.finishBatch(input.parentRunId, input.status, input.message);
      if (input.ended)
        exportRunSpan(deps.tracer, {
          runId: input.parentRunId,
          kind: 'batch',
          ...input.ended,
          status: input.status,
        });
    },

    /**
     * Inline mode: rows [start, end) run here, at most `miniBatchSize` at a time (a sliding
     * window). Every FLUSH_EVERY_MS the rows that ended are recorded as runs, the output file gets
     * the lines of the rows now contiguous from the front, and the parent's progress is saved, so
     * a retry after a crash re-runs only the rows that were not recorded.
     */
    runBatchChunk: (input: BatchChunkInput) => failIfGone(() => runChunk(input)),

    /** Child mode: records (PENDING) and inputs of rows [start, end), before their workflows start. */
    prepareBatchRows: (input: PrepareBatchRowsInput) => failIfGone(() => prepareRows(input)),

    /** Child mode: the lines of rows that are now contiguous from the front, and the progress. */
    appendBatchLines: (input: BatchLinesInput) =>
      failIfGone(async () => {
        await outputs.appendLines(input.outputFileId, await outcomeLines(input.outcomes), { part: input.firstRow });
        await runs.setBatchProgress(input.parentRunId, {
          rows_done: input.progress.done,
          rows_failed: input.progress.failed,
        });
      }),
  };

  /** Output lines carry the full values: a row's large outputs are read back from their refs. */
  async function outcomeLines(outcomes: RowOutcome[]): Promise<string[]> {
    const lines: string[] = [];
    for (const outcome of outcomes) lines.push(outcomeLine(await deps.values.resolve(outcome)));
    return lines;
  }

  async function runChunk(input: BatchChunkInput): Promise<BatchChunkResult> {
    const ctx = Context.current();
    const { batch, start, end } = input;
    const level = planGraph(batch.definition);
    const rows = await datasets.readRows(batch.datasetId, start, end);
    const runIds = rows.map((_, i) => batchRowRunId(batch.parentRunId, start + i));
    const nodeIds = topLevelIds(batch.definition);
    const base = recordBase(batch);

    // A retry: rows recorded by an earlier attempt keep their outcome and are not run again; so
    // do rows that ended in an earlier round of a provider-batch run.
    const outcomes: ChunkOutcome[] = new Array(rows.length);
    const round = input.round;
    if (ctx.info.attempt > 1 || round !== undefined) {
      // An earlier attempt that timed out may still be running somewhere: its next heartbeat is
      // refused and cancels its rows. Give it that long before reading what it recorded, so no row
      // runs in two attempts at once.
      if (ctx.info.attempt > 1) await fence(ctx);
      // A retry never follows the batch's own cancel: rows an earlier attempt cancelled were cut
      // off with it, and run again here.
      const recorded = await runs.endedRuns(runIds);
      await runs.discardRows(recorded.filter((r) => r.status === 'CANCELED').map((r) => r.runId));
      const ended = new Map(recorded.filter((r) => r.status !== 'CANCELED').map((r) => [r.runId, rowOutcome(r)]));
      runIds.forEach((id, i) => (outcomes[i] = ended.get(id)));
    }
    const linesNext = Math.max(0, (await outputs.linesWritten(batch.outputFileId)) - start);
    const count = { ok: 0, failed: 0 };
    for (const o of outcomes) if (o && o !== 'canceled') count[o.ok ? 'ok' : 'failed']++;
    const flusher = new ChunkFlusher(
      {
        insertEnded: (b, ended) =>
          runs.insertEndedRows(
            b,
            ended.map((e) => ({ ...e.run, initialInputs: e.initialInputs })),
          ),
        lines: (ready) => outcomeLines(ready),
        appendLines: (id, lines, opts) => outputs.appendLines(id, lines, opts),
        saveProgress: (done, failed) =>
          runs.setBatchProgress(batch.parentRunId, { rows_done: done, rows_failed: failed }),
        heartbeat: (details) => ctx.heartbeat(details),
      },
      { base, outputFileId: batch.outputFileId, start, before: input.before },
      outcomes,
      count,
      linesNext,
    );
    flusher.start(FLUSH_EVERY_MS);

    // A provider-batch round: each row's memo (what its nodes did so far, the answers it has).
    const memos = round === undefined ? null : await providerBatches.memos(batch.parentRunId, round, start, end);
    const held: Array<{ row: number; memo: RowMemo }> = [];
    const runRow = async (i: number) => {
      const runId = runIds[i] as string;
      const cells = await rowValues(runId, rowInput(rows[i] as DatasetRow, batch.columns));
      const rowRun: RowRunInput = {
        runId,
        workflowId: batch.workflowId,
        taskIds: batchRowTaskIds(runId, nodeIds),
        inputNodeInput: cells,
      };
      const memo = memos ? structuredClone(memos.get(start + i) ?? EMPTY_MEMO) : null;
      const dryRun = input.dryRun ? rowDryRun(input.dryRun, rows[i] as DatasetRow) : undefined;
      const executor = memo
        ? providerBatchExecutor(deps, runId, rowBudget(rowRun), memo, ctx.cancellationSignal, dryRun)
        : undefined;
      const run = await runRowOrFail(deps, level, rowRun, ctx.cancellationSignal, executor?.execute);
      // A row that holds a request goes on next round: it has not ended, nothing of it is recorded.
      if (memo && executor?.held() && run.status !== 'CANCELED') return void held.push({ row: start + i, memo });
      if (run.status === 'CANCELED') outcomes[i] = 'canceled';
      else {
        const outcome = rowOutcome(run);
        outcomes[i] = outcome;
        count[outcome.ok ? 'ok' : 'failed']++;
      }
      flusher.rowEnded({ index: i, run, initialInputs: { [batch.inputNodeId]: cells } });
    };
    try {
      await slidingWindow(
        rows.length,
        batch.miniBatchSize,
        (i) => outcomes[i] === undefined,
        runRow,
        ctx.cancellationSignal,
        pacer,
      );
    } finally {
      await flusher.finish(ctx.cancellationSignal);
    }
    if (ctx.cancellationSignal.aborted) throw new CancelledFailure(CANCELED_MESSAGE);
    if (round === undefined) return count;
    await providerBatches.saveHeld(batch.parentRunId, round, held);
    return { ...count, held: held.length };
  }

  async function prepareRows(input: PrepareBatchRowsInput): Promise<BatchChildRow[]> {
    const { batch, recordedRunColumn: column } = input;
    const nodeIds = topLevelIds(batch.definition);
    const rows = await datasets.readRows(batch.datasetId, input.start, input.end);
    const prepared = await Promise.all(
      rows.map(async (row, i) => {
        const runId = batchRowRunId(batch.parentRunId, input.start + i);
        const recorded = recordedRunOf(row, column);
        return {
          row: input.start + i,
          runId,
          inputNodeInput: await rowValues(runId, rowInput(row, batch.columns)),
          taskIds: batchRowTaskIds(runId, nodeIds),
          ...(recorded ? { recordedRunId: recorded } : {}),
        };
      }),
    );
    await runs.insertPendingRows(
      recordBase(batch),
      prepared.map((p) => ({ runId: p.runId, initialInputs: { [batch.inputNodeId]: p.inputNodeInput } })),
    );
    return prepared;
  }
}

/** A row's dry run: the batch's, naming the run the row came from where its suite was made from runs. */
function rowDryRun({ recordedRunColumn: column, ...dryRun }: DryRun, row: DatasetRow): DryRun {
  const recorded = recordedRunOf(row, column);
  return recorded ? { ...dryRun, recordedRunId: recorded } : dryRun;
}

/** The run a row of a suite made from runs came from (its cell in the run-id column), if it names one. */
function recordedRunOf(row: DatasetRow, column: string | undefined): string | undefined {
  const cell = column === undefined ? undefined : row[column];
  return typeof cell === 'string' && cell ? cell : undefined;
}

/** A row's cells as its run carries them: large ones by reference, stored under the row's run. */
async function rowValuesOf(
  deps: NodeActivityDeps,
  runId: string,
  cells: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  try {
    return await deps.values.externalize(runId, cells, `The input of row run ${runId}`);
  } catch (err) {
    if (err instanceof ValueTooLargeError) throw ApplicationFailure.nonRetryable(err.message, 'BatchRowTooLarge');
    if (err instanceof ForeignValueRefError) throw ApplicationFailure.nonRetryable(err.message, 'BatchRowRefused');
    throw err;
  }
}

/** What every row run of the batch shares on its record. */
function recordBase(batch: BatchRows): RowRecordBase {
  return {
    seq: batch.parentSeq,
    workflowId: batch.workflowId,
    workflowVersionId: batch.workflowVersionId,
    parentRunId: batch.parentRunId,
    datasetId: batch.datasetId,
  };
}

function topLevelIds(definition: RunDefinition): string[] {
  return definition.nodes.filter((n) => n.parent_id === null).map((n) => n.id);
}

/** Abort listeners one row may add to its chunk's signal at once (a request, a retry's wait, a slot's wait). */
const LISTENERS_PER_ROW = 4;

/**
 * Runs `work(i)` for every i in [0, n) that `wanted(i)`, at most `width` at a time, in order of i,
 * each started only once the pacer admits it (a busy host holds bulk rows back).
 */
async function slidingWindow(
  n: number,
  width: number,
  wanted: (i: number) => boolean,
  work: (i: number) => Promise<void>,
  signal: AbortSignal,
  pacer: BulkPacer,
): Promise<void> {
  let next = 0;
  const lanes = Math.max(1, Math.min(width, n));
  // Every row in flight listens on the chunk's one signal (its model call's request, its waits):
  // many at once is the design, not a leak, so Node is told how many to expect.
  setMaxListeners(Math.max(defaultMaxListeners, lanes * LISTENERS_PER_ROW), signal);
  const lane = async () => {
    while (!signal.aborted) {
      // A cancelled chunk stops waiting at once (acquire rejects); its rows are recorded as they ended.
      const admitted = await pacer.acquire(signal).then(
        () => true,
        () => false,
      );
      if (!admitted) return;
      try {
        while (next < n && !wanted(next)) next++;
        if (next >= n || signal.aborted) return;
        await work(next++);
      } finally {
        pacer.release();
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

/** Longer than a refused heartbeat takes to reach an earlier attempt (throttled to 1 s) and stop its rows. */
const FENCE_MS = 3000;

async function fence(ctx: Context): Promise<void> {
  ctx.heartbeat({ fencing: true });
  await ctx.sleep(FENCE_MS);
}
