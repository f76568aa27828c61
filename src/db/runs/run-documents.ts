import type { RunStatus, RunTriggerKind } from '../../engine/statuses';
import { toJsonText } from '../json-text';
import type { RunDoc } from '../models';

/** What a new run record says; values (inputs, outputs) arrive already by reference where large. */
export interface NewRun {
  id: string;
  seq: number;
  workflowId: string;
  workflowVersionId: string | null;
  runType: string;
  initialInputs: unknown;
  status?: RunStatus;
  parentRunId?: string | null;
  inputDatasetId?: string | null;
  /** A batch parent's output file (created before its record) and the mini-batch size it was asked for. */
  outputFileId?: string | null;
  miniBatchSize?: number | null;
  /** A batch parent's llm_mode when not online. */
  llmMode?: 'provider_batch' | null;
  outputs?: unknown;
  message?: string | null;
  startTime?: Date;
  endTime?: Date | null;
  /** A batch parent's progress over its dataset. */
  rows?: { total: number; done: number; failed: number };
  /** The run's callback, its secret already sealed. */
  callback?: StoredCallback | null;
  /** The idempotency record the run was recorded for (db/idempotency-keys.ts). */
  idempotencyKey?: string | null;
  /** A rerun of an ended run from one of its nodes; `inputOverrides` already by reference where large. */
  rerun?: { of: string; fromNodeId: string; inputOverrides: Record<string, unknown> | null };
  /** A schedule's fire or a webhook delivery that started the run. */
  trigger?: RunTrigger | null;
  /** Who asked for the run (src/runs/run-caller.ts). */
  startedBy?: string | null;
  /** Who started it as people read it (the Temporal Web UI's SpurStartedBy, src/runs/run-caller.ts). */
  startedByName?: string | null;
  /** The caller's `traceparent`, already validated (src/contracts/trace-ids.ts). */
  traceParent?: string | null;
}

export interface RunTrigger {
  kind: RunTriggerKind;
  /** The schedule (`SC<n>`), webhook trigger (`TR<n>`) or parent run (`R<n>`). */
  id: string;
  scheduledTime?: Date | null;
  deliveryId?: string | null;
  /** Unique per fire: a retried recording of the same fire finds its run by it. */
  key?: string | null;
}

export interface StoredCallback {
  url: string;
  events: string[];
  /** Sealed (SecretBox): opened only by the delivery activity. */
  secret: string;
}

/** The one place a run document is built (api runs, batch parents, batch rows alike). */
export function runDocument(r: NewRun): RunDoc {
  return {
    _id: r.id,
    seq: r.seq,
    workflow_id: r.workflowId,
    workflow_version_id: r.workflowVersionId,
    status: r.status ?? 'PENDING',
    start_time: r.startTime ?? new Date(),
    end_time: r.endTime ?? null,
    initial_inputs: toJsonText(r.initialInputs),
    outputs: r.outputs === undefined ? null : toJsonText(r.outputs),
    parent_run_id: r.parentRunId ?? null,
    run_type: r.runType,
    output_file_id: r.outputFileId ?? null,
    input_dataset_id: r.inputDatasetId ?? null,
    mini_batch_size: r.miniBatchSize ?? null,
    ...(r.llmMode ? { llm_mode: r.llmMode } : {}),
    message: r.message ?? null,
    rows_total: r.rows?.total ?? null,
    rows_done: r.rows?.done ?? null,
    rows_failed: r.rows?.failed ?? null,
    callback: r.callback ?? null,
    idempotency_key: r.idempotencyKey ?? null,
    started_by: r.startedBy ?? null,
    started_by_name: r.startedByName ?? null,
    rerun_of: r.rerun?.of ?? null,
    rerun_from_node_id: r.rerun?.fromNodeId ?? null,
    rerun_input_overrides: r.rerun?.inputOverrides ? toJsonText(r.rerun.inputOverrides) : null,
    trigger: r.trigger
      ? {
          kind: r.trigger.kind,
          id: r.trigger.id,
          scheduled_time: r.trigger.scheduledTime ?? null,
          delivery_id: r.trigger.deliveryId ?? null,
          key: r.trigger.key ?? null,
        }
      : null,
    trace_parent: r.traceParent ?? null,
    event_head: null,
    event_head_before: null,
    // An open run's tasks are on its record (none yet: its polls need not look elsewhere); an
    // ended run's are kept apart (run-task-reads.ts).
    tasks: r.endTime ? null : toJsonText([]),
  };
}
