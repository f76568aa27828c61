import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';
import { RUN_STATUSES, RUN_TRIGGER_KINDS } from '../../engine/statuses';
import { storedCallbackField } from './stored-callback.schema';

/**
 * The run projection. The api creates it (PENDING); from then on only the run's own workflow
 * activities write it, one at a time (FerretDB v1 updates are read-then-write).
 */
export const runSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    workflow_id: { type: String, required: true },
    workflow_version_id: { type: String, default: null },
    status: { type: String, enum: RUN_STATUSES, required: true },
    start_time: { type: Date, required: true },
    end_time: { type: Date, default: null },
    /** JSON text (db/json-text.ts), as every user payload. */
    initial_inputs: { type: String, default: null },
    outputs: { type: String, default: null },
    parent_run_id: { type: String, default: null },
    run_type: { type: String, required: true },
    output_file_id: { type: String, default: null },
    input_dataset_id: { type: String, default: null },
    /** A batch parent's `mini_batch_size`: with the dataset and output file, what its workflow is started with. */
    mini_batch_size: { type: Number, default: null },
    /** A batch parent's `llm_mode` when it is `provider_batch` (absent: online). */
    llm_mode: { type: String, default: null },
    message: { type: String, default: null },
    /** A batch parent's progress (it has no tasks): rows in the dataset, rows finished, failed. */
    rows_total: { type: Number, default: null },
    rows_done: { type: Number, default: null },
    rows_failed: { type: Number, default: null },
    /**
     * Where the run's callback events are posted: set by the api at creation, never in a
     * workflow's input or history. `secret` is sealed (AES-256-GCM, the installation's key).
     */
    callback: storedCallbackField,
    /** The `Idempotency-Key` record (its `_id`) this run was recorded for: the run starts only if that record names it. */
    idempotency_key: { type: String, default: null },
    /** A rerun (`POST /run/{id}/rerun/`): the run it repeats, the node it starts from, the client's input for that node (JSON text). */
    rerun_of: { type: String, default: null },
    rerun_from_node_id: { type: String, default: null },
    /** Who asked for the run: `key:<12 hex of the key's digest>`, `session`, or null. */
    started_by: { type: String, default: null },
    /**
     * Who started the run as people read it: a user's username, `key:<tag>` (a configured key),
     * `session`, `local`, or its trigger (`schedule:SC4`, `webhook:TR2`): the SpurStartedBy search attribute.
     */
    started_by_name: { type: String, default: null },
    rerun_input_overrides: { type: String, default: null },
    /**
     * What the run's event stream has said so far (JSON text of EventHead), saved with the write
     * it describes, and the head before that write: run-events.ts. Null until the first event.
     */
    /**
     * What started the run when no client did: a schedule's fire (`key`: the Temporal workflow id
     * of that fire, so a retried recording finds the run it made), a webhook delivery or a parent
     * run's SubworkflowNode (`id`: the parent run; `key`: the parent run and node).
     */
    trigger: {
      type: new Schema(
        {
          kind: { type: String, enum: RUN_TRIGGER_KINDS, required: true },
          id: { type: String, required: true },
          scheduled_time: { type: Date, default: null },
          delivery_id: { type: String, default: null },
          key: { type: String, default: null },
        },
        { _id: false },
      ),
      default: null,
    },
    /**
     * The caller's W3C trace context (`traceparent`, validated and normalised by the api): the
     * run's trace continues it, whichever process starts the run's workflow.
     */
    trace_parent: { type: String, default: null },
    event_head: { type: String, default: null },
    event_head_before: { type: String, default: null },
    /**
     * An open run's tasks (JSON text of TaskRecord[], `[]` when recorded) while they are small; null
     * once they are kept in `run_tasks`, as every ended run's are (src/db/runs/run-task-reads.ts).
     */
    tasks: { type: String, default: null },
  },
  { collection: 'runs', versionKey: false },
);
runSchema.index({ workflow_id: 1, start_time: -1 });
runSchema.index({ start_time: -1 });
runSchema.index({ 'trigger.id': 1, start_time: -1 });
runSchema.index({ 'trigger.key': 1 });

export type RunDoc = InferSchemaType<typeof runSchema> & { _id: string } & WorkspaceOwnedFields;
