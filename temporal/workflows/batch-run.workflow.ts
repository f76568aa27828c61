import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  continueAsNew,
  executeChild,
  isCancellation,
  proxyActivities,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { BatchActivities, ProviderBatchActivities } from '../activities';
import { runProviderBatchRounds } from './provider-batch-rounds';
import {
  type BatchChildRow,
  type BatchCursor,
  type BatchRows,
  type BatchRunInput,
  type RowOutcome,
} from '../../src/contracts/batch-contract';
import type { SpurRunInput, SpurRunResult } from '../../src/contracts/run-contract';
import { SpurRunStatus } from '../../src/contracts/search-attributes';
import { CANCELED_MESSAGE } from '../../src/engine/statuses';
import { WorkflowType, runWorkflowId } from '../../src/contracts/workflow-names';
import { failureMessage } from './graph-runner';
import { announceEnd } from './callbacks';
import type { DryRun } from '../../src/engine/dry-run';

/** Errors no retry can mend: Mongoose refusing a document, an input that is gone. */
const PERMANENT = ['CastError', 'ValidationError', 'StrictModeError', 'BatchInputGone'];

/** SPUR_PROVIDER_BATCH_POLL_MAX_SECONDS's default: the longest wait between two polls of a provider batch. */
const DEFAULT_POLL_MAX_SECONDS = 300;

/** Rows whose records a child-mode batch creates at once. */
const CHILD_PREPARE_ROWS = 50;

const chunks = proxyActivities<BatchActivities>({
  startToCloseTimeout: '2h',
  // A chunk heartbeats at every flush (250 ms): a dead worker's chunk moves on within seconds.
  heartbeatTimeout: '10s',
  // A cancelled chunk records the rows it ran before the batch is marked CANCELED.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  // Bounded: a chunk that cannot finish in ~15 min of tries (a database away that long, a bug)
  // fails the batch with the reason instead of retrying forever. Its rows never throw: a bad row
  // fails alone (batch-row.ts); a record that cannot be stored fails its row (batch-chunk-flusher.ts).
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    maximumAttempts: 35,
    nonRetryableErrorTypes: PERMANENT,
  },
});
const bookkeeping = proxyActivities<BatchActivities & ProviderBatchActivities>({
  startToCloseTimeout: '1m',
  retry: {
    initialInterval: '500ms',
    backoffCoefficient: 2,
    maximumInterval: '10s',
    maximumAttempts: 40,
    nonRetryableErrorTypes: PERMANENT,
  },
});

/**
 * A batch run (`run-<parent id>`): every dataset row becomes a run of its own (`R<parent>-<row>`,
 * parent_run_id set), at most mini_batch_size at a time, its blocking-run body appended to the
 * JSONL output file in row order. Continues as new before its history grows large; cancel reaches
 * every row.
 */
export async function spurBatchRun(input: BatchRunInput): Promise<void> {
  const cursor: BatchCursor = { ...input.cursor };
  let more: boolean;
  try {
    if (cursor.next === 0) {
      await bookkeeping.markBatchRunning({ parentRunId: input.parentRunId, total: input.rowCount });
      upsertSearchAttributes([{ key: SpurRunStatus, value: 'RUNNING' } as never]);
    }
    const rows: BatchRows = {
      parentRunId: input.parentRunId,
      parentSeq: input.parentSeq,
      workflowId: input.workflowId,
      workflowVersionId: input.workflowVersionId,
      datasetId: input.datasetId,
      outputFileId: input.outputFileId,
      definition: input.definition,
      inputNodeId: input.inputNodeId,
      columns: input.columns,
      rowCount: input.rowCount,
      miniBatchSize: input.miniBatchSize,
    };
    // A dry batch runs its rows as child workflows, where the dry run is kept (spurRun).
    if (input.llmMode === 'provider_batch') {
      await runProviderBatchRounds(chunks, bookkeeping, rows, cursor, {
        chunkRows: input.chunkRows,
        pollMaxSeconds: input.providerBatchPollMaxSeconds ?? DEFAULT_POLL_MAX_SECONDS,
        ...(input.dryRun ? { dryRun: input.dryRun } : {}),
      });
      more = false;
    } else
      more =
        input.mode === 'inline' && !input.dryRun
          ? await runInline(rows, cursor, input.historyEventsLimit, input.chunkRows)
          : await runChildren(input, rows, cursor);
    if (!more) {
      const message = cursor.failed > 0 ? `${cursor.ok} rows completed, ${cursor.failed} failed` : null;
      await finish(input, cursor.failed > 0 ? 'FAILED' : 'COMPLETED', message);
    }
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => finish(input, 'CANCELED', CANCELED_MESSAGE));
      throw err;
    }
    await finish(input, 'FAILED', `Batch failed: ${failureMessage(err)}`);
    throw ApplicationFailure.nonRetryable(`Batch failed: ${failureMessage(err)}`, 'BatchFailed');
  }
  if (more) await continueAsNew<typeof spurBatchRun>({ ...input, cursor });
}

async function finish(input: BatchRunInput, status: 'COMPLETED' | 'FAILED' | 'CANCELED', message: string | null) {
  if (input.llmMode === 'provider_batch') await bookkeeping.endProviderBatchRun({ batchRunId: input.parentRunId });
  const ended = input.trace ? { ended: { workflowId: input.workflowId, trace: input.trace } } : {};
  await bookkeeping.finishBatch({ parentRunId: input.parentRunId, status, message, ...ended });
  upsertSearchAttributes([{ key: SpurRunStatus, value: status } as never]);
  await announceEnd(input.parentRunId, input.callback, status);
}

/** A row's dry run: the batch's, and the run the row came from where the suite was made from runs. */
function rowDryRun({ recordedRunColumn: _column, ...dryRun }: DryRun, row: BatchChildRow): DryRun {
  return row.recordedRunId ? { ...dryRun, recordedRunId: row.recordedRunId } : dryRun;
}

/** Continue-as-new well before Temporal's limits, keeping each run's history small to replay. */
const historyIsLarge = (limit: number) => workflowInfo().historyLength > limit || workflowInfo().continueAsNewSuggested;

/** Inline mode: one activity per chunk of rows, one chunk after another. True: continue as new. */
async function runInline(
  rows: BatchRows,
  cursor: BatchCursor,
  historyLimit: number,
  chunkRows: number,
): Promise<boolean> {
  while (cursor.next < rows.rowCount) {
    if (historyIsLarge(historyLimit)) return true;
    const end = Math.min(rows.rowCount, cursor.next + chunkRows);
    const result = await chunks.runBatchChunk({
      batch: rows,
      start: cursor.next,
      end,
      before: { ok: cursor.ok, failed: cursor.failed },
    });
    cursor.ok += result.ok;
    cursor.failed += result.failed;
    cursor.next = end;
  }
  return false;
}

/**
 * Child mode: every row a `spurRun` child workflow, a sliding window of mini_batch_size of them.
 * Lines go out as soon as the rows before them have ended. Before continuing as new the window
 * drains (children cannot be handed over). True: continue as new.
 */
async function runChildren(input: BatchRunInput, rows: BatchRows, cursor: BatchCursor): Promise<boolean> {
  const ended = new Map<number, RowOutcome>();
  const inFlight = new Map<number, Promise<void>>();
  let prepared: BatchChildRow[] = [];
  let nextToStart = cursor.next;
  let endedCount = 0;
  let endedFailed = 0;
  const startRow = (row: BatchChildRow) => {
    const child: SpurRunInput = {
      runId: row.runId,
      workflowId: rows.workflowId,
      definition: rows.definition,
      inputNodeInput: row.inputNodeInput,
      taskIds: row.taskIds,
      ...(input.workflowIdPrefix ? { workflowIdPrefix: input.workflowIdPrefix } : {}),
      ...(input.dryRun ? { dryRun: rowDryRun(input.dryRun, row) } : {}),
    };
    const done = executeChild<(i: SpurRunInput) => Promise<SpurRunResult>>(WorkflowType.spurRun, {
      workflowId: runWorkflowId(row.runId, input.workflowIdPrefix),
      args: [child],
      staticSummary: `row ${row.row + 1} of batch ${rows.parentRunId}`,
    }).then(
      (result): RowOutcome =>
        result.status === 'COMPLETED'
          ? { ok: true, outputsById: result.outputsById }
          : { ok: false, error: result.message ?? result.status, runId: row.runId },
      // A row cancelled on its own is a failed row; the batch's own cancel is noticed by the
      // next activity or child start, which the cancelled scope refuses.
      (err): RowOutcome => ({ ok: false, error: failureMessage(err), runId: row.runId }),
    );
    inFlight.set(
      row.row,
      done.then((outcome) => {
        ended.set(row.row, outcome);
        inFlight.delete(row.row);
        endedCount++;
        if (!outcome.ok) endedFailed++;
      }),
    );
  };

  let stopping = false;
  for (;;) {
    // First the lines of rows now contiguous from the front (rows may have ended during the last
    // append): a continue-as-new must never leave an ended row without its line.
    const outcomes: RowOutcome[] = [];
    for (let o = ended.get(cursor.next + outcomes.length); o; o = ended.get(cursor.next + outcomes.length))
      outcomes.push(o);
    if (outcomes.length > 0) {
      await bookkeeping.appendBatchLines({
        parentRunId: rows.parentRunId,
        outputFileId: rows.outputFileId,
        firstRow: cursor.next,
        outcomes,
        progress: { done: cursor.ok + cursor.failed + endedCount, failed: cursor.failed + endedFailed },
      });
      for (const o of outcomes) {
        ended.delete(cursor.next++);
        if (o.ok) cursor.ok++;
        else cursor.failed++;
        endedCount--;
        if (!o.ok) endedFailed--;
      }
    }
    if (cursor.next >= rows.rowCount) return false;
    stopping ||= historyIsLarge(input.historyEventsLimit);
    while (!stopping && inFlight.size < rows.miniBatchSize && nextToStart < rows.rowCount) {
      if (prepared.length === 0) {
        const column = input.dryRun?.recordedRunColumn;
        prepared = await bookkeeping.prepareBatchRows({
          batch: rows,
          start: nextToStart,
          end: Math.min(rows.rowCount, nextToStart + CHILD_PREPARE_ROWS),
          ...(column ? { recordedRunColumn: column } : {}),
        });
      }
      startRow(prepared.shift() as BatchChildRow);
      nextToStart++;
    }
    if (inFlight.size === 0) {
      // Every started row has ended; their lines go out first (rows start in order, so they are
      // contiguous), then the window is drained and the workflow may continue as new.
      if (ended.size === 0) return stopping;
      continue;
    }
    await Promise.race(inFlight.values());
  }
}
