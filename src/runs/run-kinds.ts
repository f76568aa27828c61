import type { LlmMode } from '../engine/provider-batch-plan';
import type { NewRun, RunTrigger, StoredCallback } from '../db/runs/run-documents';
import type { RunCaller } from './run-caller';

/** Every way a run comes to be recorded: what started it, not how it is answered. */
export type RunKind =
  /** POST /wf/{id}/start_run/ (answered PENDING at once). */
  | 'start_run'
  /** POST /wf/{id}/run/ and /runv2/ (answered with the outcome). */
  | 'blocking'
  | 'webhook'
  /** An MCP client's tools/call of a published workflow. */
  | 'mcp'
  /** POST /v1/chat/completions (the OpenAI-compatible endpoint). */
  | 'openai'
  | 'rerun'
  /** A bulk action's retry of an ended run: the same inputs (the original's, stored already), the same version. */
  | 'retry'
  | 'batch'
  | 'scheduled'
  | 'eval'
  /** A parent run's SubworkflowNode: the child's inputs are mapped from the node's input. */
  | 'subworkflow';

interface KindRules {
  /** The run's `run_type`: the kind's own, or null for the client's `?run_type=` (default `interactive`). */
  runType: string | null;
  /** Who asked is recorded (`started_by`, the ledger's api_key group); a schedule fires by itself. */
  caller: boolean;
  /** Under which name its inputs are stored as a client's values (a 422 names it), or null: none to store. */
  storedAs: 'initial_inputs' | 'input_overrides' | null;
  /** A batch parent over a dataset: its output file (`output_<run id>.jsonl`) is made with its record. */
  outputFile: boolean;
  /** The client's `files` join its inputs (PySpur's blocking run; start_run leaves them out). */
  mergesFiles: boolean;
}

/** What each kind of run records differently; everything else comes with its request. */
export const RUN_KINDS: Readonly<Record<RunKind, KindRules>> = {
  start_run: { runType: null, caller: true, storedAs: 'initial_inputs', outputFile: false, mergesFiles: false },
  blocking: { runType: null, caller: true, storedAs: 'initial_inputs', outputFile: false, mergesFiles: true },
  webhook: { runType: 'webhook', caller: true, storedAs: 'initial_inputs', outputFile: false, mergesFiles: false },
  mcp: { runType: 'mcp', caller: true, storedAs: 'initial_inputs', outputFile: false, mergesFiles: false },
  openai: { runType: 'openai', caller: true, storedAs: 'initial_inputs', outputFile: false, mergesFiles: false },
  rerun: { runType: null, caller: true, storedAs: 'input_overrides', outputFile: false, mergesFiles: false },
  retry: { runType: null, caller: true, storedAs: null, outputFile: false, mergesFiles: false },
  batch: { runType: 'batch', caller: true, storedAs: null, outputFile: true, mergesFiles: false },
  scheduled: { runType: 'scheduled', caller: false, storedAs: 'initial_inputs', outputFile: false, mergesFiles: false },
  eval: { runType: 'eval', caller: true, storedAs: null, outputFile: true, mergesFiles: false },
  subworkflow: {
    runType: 'subworkflow',
    caller: false,
    storedAs: 'initial_inputs',
    outputFile: false,
    mergesFiles: false,
  },
};

/** A batch's dataset as recorded with its parent: the rows it covers and how many run at once. */
export interface DatasetRun {
  id: string;
  rows: number;
  miniBatchSize: number;
  /** `provider_batch`: the rows' model calls go out as provider batches; absent: online. */
  llmMode?: LlmMode;
}

/** A rerun's source (its request's inputs are the original's initial inputs, by reference where large). */
export interface RerunOf {
  of: string;
  fromNodeId: string;
  /** The client's new input for the start node, stored under the rerun (null: none). */
  overrides: Record<string, unknown> | null;
  /** The InputNode's id when the rerun starts there: its overrides become the run's initial inputs. */
  inputNodeId: string | null;
}

/** The fields of a run request that are plain data (what `record` stores first is added to them). */
export interface RunFields {
  kind: RunKind;
  /** The client's `?run_type=`, for the kinds that take it. */
  runType?: string;
  parentRunId?: string | null;
  /** Checked and sealed already (a client's), or the trigger's. */
  callback?: StoredCallback | null;
  idempotencyKey?: string | null;
  trigger?: RunTrigger | null;
  /** The caller's `traceparent`, already validated. */
  traceParent?: string | null;
  dataset?: DatasetRun;
  rerun?: RerunOf;
}

/** What `record` stored under the run's id before building its record. */
export interface StoredParts {
  initialInputs: unknown;
  /** A rerun's overrides, by reference where large. */
  overrides?: Record<string, unknown> | null;
  outputFileId?: string | null;
}

/** The pinned version the run executes. */
export interface PinnedVersion {
  _id: string;
  workflow_id: string;
}

/** The record of one run, whatever its kind: the kind's rules applied to its request. */
export function recordFields(
  request: RunFields,
  version: PinnedVersion,
  stored: StoredParts,
  caller: RunCaller | null,
): Omit<NewRun, 'id' | 'seq'> {
  const rules = RUN_KINDS[request.kind];
  const asked = rules.caller ? caller : null;
  // A run no client asked for is started by its trigger: `schedule:SC4`, `webhook:TR2`.
  const trigger = request.trigger ? `${request.trigger.kind}:${request.trigger.id}` : null;
  const runType = rules.runType ?? request.runType;
  if (runType === undefined) throw new Error(`A ${request.kind} run needs the client's run_type`);
  return {
    workflowId: version.workflow_id,
    workflowVersionId: version._id,
    runType,
    initialInputs: stored.initialInputs,
    parentRunId: request.parentRunId ?? null,
    callback: request.callback ?? null,
    idempotencyKey: request.idempotencyKey ?? null,
    trigger: request.trigger ?? null,
    traceParent: request.traceParent ?? null,
    startedBy: asked?.id ?? null,
    startedByName: asked?.name ?? trigger,
    outputFileId: stored.outputFileId ?? null,
    ...(request.dataset
      ? {
          inputDatasetId: request.dataset.id,
          rows: { total: request.dataset.rows, done: 0, failed: 0 },
          miniBatchSize: request.dataset.miniBatchSize,
          ...(request.dataset.llmMode === 'provider_batch' ? { llmMode: request.dataset.llmMode } : {}),
        }
      : {}),
    ...(request.rerun
      ? {
          rerun: {
            of: request.rerun.of,
            fromNodeId: request.rerun.fromNodeId,
            inputOverrides: stored.overrides ?? null,
          },
        }
      : {}),
  };
}
