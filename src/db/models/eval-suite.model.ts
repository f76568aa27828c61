import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';
import { DRY_RUN_PAUSES, type DryRunPauses } from '../../engine/dry-run';

/**
 * An eval suite (`EV<n>`): a stored dataset, the column holding each row's expected answer, the
 * columns that feed the workflow and how an output is scored. The scorer is JSON text: it holds
 * user strings (patterns, schemas, code) whose keys FerretDB would refuse as field names.
 */
export const evalSuiteSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    /** What PySpur's page launches by (`eval_name`), so unique. */
    name: { type: String, required: true },
    description: { type: String, default: '' },
    /** The card's "Type" (PySpur: Reasoning, Knowledge…). */
    category: { type: String, default: 'Custom' },
    dataset_id: { type: String, required: true },
    answer_column: { type: String, required: true },
    /** Columns that feed the InputNode; empty: the workflow's input fields, taken from the same-named columns. */
    input_columns: { type: [String], default: [] },
    /** Rows of the dataset when the suite was made (datasets do not change). */
    row_count: { type: Number, required: true },
    scorer: { type: String, required: true },
    /** How a human pause in its evals resolves (they are dry runs: src/engine/dry-run.ts). */
    pauses: { type: String, enum: DRY_RUN_PAUSES, default: 'decline' },
    /** Node types that act for real in its evals (declared safe); every other acting node sends nothing. */
    live_node_types: { type: [String], default: [] },
    /** A suite made from runs: the dataset column naming each row's run (its recorded outputs stand in for acting nodes). */
    source_run_column: { type: String, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'eval_suites', versionKey: false },
);
/** Unique within a workspace: another workspace may use the same name. */
evalSuiteSchema.index({ workspace_id: 1, name: 1 }, { unique: true });

export type EvalSuiteDoc = InferSchemaType<typeof evalSuiteSchema> & {
  _id: string;
  pauses: DryRunPauses;
} & WorkspaceOwnedFields;
