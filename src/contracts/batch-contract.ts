import type { RunCallbackInfo } from '../engine/callback-events';
import type { NodeOutput, RunDefinition } from '../engine/run-contract';
import type { RunTrace } from './trace-ids';
import type { DryRun } from '../engine/dry-run';
import type { LlmMode } from '../engine/provider-batch-plan';

/**
 * How a batch runs its rows.
 * - `inline`: rows run in-process inside one activity per chunk (hundreds of rows per activity),
 *   each still recorded as its own child run with tasks. Fast: one Temporal round trip per chunk.
 * - `child`: every row is a child `spurRun` workflow. Needed when a row can pause for a human
 *   (HumanInterventionNode), which only a workflow can wait for.
 */
export type BatchMode = 'inline' | 'child';

/** What the batch parent workflow carries from one continue-as-new to the next. */
export interface BatchCursor {
  /** Rows [0, next) have a line in the output file. */
  next: number;
  ok: number;
  failed: number;
}

export interface BatchRunInput {
  parentRunId: string;
  /** The parent's number: its row runs share it (they sort by start time, then this). */
  parentSeq: number;
  /** Row runs' workflow ids in child mode (the installation's run-workflow prefix). */
  workflowIdPrefix: string;
  workflowId: string;
  workflowVersionId: string;
  datasetId: string;
  outputFileId: string;
  definition: RunDefinition;
  inputNodeId: string;
  /** Dataset columns the InputNode takes (its schema keys): a row's input is these cells. */
  columns: string[];
  rowCount: number;
  miniBatchSize: number;
  mode: BatchMode;
  /** Continue as new once the history has this many events. */
  historyEventsLimit: number;
  /** Rows per inline chunk activity (SPUR_BATCH_CHUNK_ROWS). */
  chunkRows: number;
  cursor: BatchCursor;
  /** The batch's callback: its events only (its url and secret stay on the run record). */
  callback?: RunCallbackInfo;
  /** The batch's trace ids: its span is exported when it finishes. */
  trace?: RunTrace;
  /** Set on an eval's batch: every row is a dry run (src/engine/dry-run.ts), in child mode. */
  dryRun?: DryRun;
  /** `provider_batch`: rows advance node by node, each node's model calls sent as one provider batch. */
  llmMode?: LlmMode;
  /** Longest wait between two polls of a provider batch (SPUR_PROVIDER_BATCH_POLL_MAX_SECONDS). */
  providerBatchPollMaxSeconds?: number;
}

/** One slice of rows for the inline mode: run them, record them, append their lines. */
export type BatchRows = Omit<
  BatchRunInput,
  | 'cursor'
  | 'mode'
  | 'workflowIdPrefix'
  | 'historyEventsLimit'
  | 'chunkRows'
  | 'callback'
  | 'trace'
  | 'dryRun'
  | 'llmMode'
  | 'providerBatchPollMaxSeconds'
>;

export interface BatchChunkInput {
  batch: BatchRows;
  start: number;
  end: number;
  /** Rows that ended before this chunk, for the parent's progress. */
  before: BatchChunkResult;
  /**
   * A provider-batch run's round (0, 1, …): rows that ended in an earlier round are not run again,
   * nodes that completed are not executed again, and a model call without its batch's answer holds
   * its row for the next round.
   */
  round?: number;
  /** An eval's provider-batch round: every row is a dry run (as DryRun says; its recordedRunColumn names the row's run). */
  dryRun?: DryRun;
}

export interface BatchChunkResult {
  ok: number;
  failed: number;
  /** Rows of a provider-batch round that hold requests for the next provider batches. */
  held?: number;
}

/** A row about to run as a child workflow (child mode): its record exists, this is its input. */
export interface BatchChildRow {
  row: number;
  runId: string;
  inputNodeInput: Record<string, unknown>;
  taskIds: Record<string, string>;
  /** A dry batch of a suite made from runs: the run the row came from (DryRun.recordedRunId). */
  recordedRunId?: string;
}

/** Which rows of a child-mode batch to record and hand out; `recordedRunColumn` as on DryRun. */
export interface PrepareBatchRowsInput {
  batch: BatchRows;
  start: number;
  end: number;
  recordedRunColumn?: string;
}

/** Lines for rows [firstRow, firstRow + outcomes.length), in row order. */
export interface BatchLinesInput {
  parentRunId: string;
  outputFileId: string;
  firstRow: number;
  outcomes: RowOutcome[];
  /** Rows ended so far (in any order), for the parent's progress. */
  progress: { done: number; failed: number };
}

export type RowOutcome =
  { ok: true; outputsById: Record<string, NodeOutput> } | { ok: false; error: string; runId: string };

export interface BatchFinish {
  parentRunId: string;
  status: 'COMPLETED' | 'FAILED' | 'CANCELED';
  message: string | null;
  /** In a traced batch: what its span needs besides the finish. */
  ended?: { workflowId: string; trace: RunTrace };
}

/**
 * A batch row's run id: the parent's id and the row's number (1-based), `R57-3`. Derived, not
 * counted, so a retried chunk finds the rows it already recorded and never runs them twice, and
 * no counter update is spent per row.
 */
export function batchRowRunId(parentRunId: string, row: number): string {
  return `${parentRunId}-${row + 1}`;
}

/** Task ids of a batch row's run, `T57-3-001`, unique because row run ids are. */
export function batchRowTaskIds(rowRunId: string, nodeIds: string[]): Record<string, string> {
  const width = Math.max(3, String(nodeIds.length).length);
  return Object.fromEntries(
    nodeIds.map((id, i) => [id, `T${rowRunId.slice(1)}-${String(i + 1).padStart(width, '0')}`]),
  );
}

/** The JSON Lines line of a row: its blocking-run body, or what went wrong. */
export function outcomeLine(outcome: RowOutcome): string {
  return JSON.stringify(outcome.ok ? outcome.outputsById : { error: outcome.error, run_id: outcome.runId });
}
