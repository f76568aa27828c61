import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';
import { DRY_RUN_PAUSES, type DryRunPauses } from '../../engine/dry-run';

export const EVAL_RUN_STATUSES = ['PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELED'] as const;
export type EvalRunStatus = (typeof EVAL_RUN_STATUSES)[number];

/**
 * An eval run (`ER<n>`, PySpur's ids): a batch run of one workflow version over a suite's first
 * `num_samples` rows (`batch_run_id`), each row scored as it ends (eval_results). Its own
 * workflow (`eval-<id>`) is the only writer after it is created.
 */
export const evalRunSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    suite_id: { type: String, required: true },
    eval_name: { type: String, required: true },
    workflow_id: { type: String, required: true },
    workflow_version_id: { type: String, required: true },
    workflow_version: { type: Number, required: true },
    output_variable: { type: String, required: true },
    num_samples: { type: Number, required: true },
    batch_run_id: { type: String, required: true },
    /** Set for the two runs of a comparison. */
    comparison_id: { type: String, default: null },
    /** The suite's dry-run settings when the eval was made (its rows are dry runs: src/engine/dry-run.ts). */
    pauses: { type: String, enum: DRY_RUN_PAUSES, default: 'decline' },
    live_node_types: { type: [String], default: [] },
    source_run_column: { type: String, default: null },
    status: { type: String, enum: EVAL_RUN_STATUSES, required: true },
    message: { type: String, default: null },
    start_time: { type: Date, required: true },
    end_time: { type: Date, default: null },
  },
  { collection: 'eval_runs', versionKey: false },
);
evalRunSchema.index({ start_time: -1 });

export type EvalRunDoc = InferSchemaType<typeof evalRunSchema> & {
  _id: string;
  status: EvalRunStatus;
  pauses: DryRunPauses;
} & WorkspaceOwnedFields;
