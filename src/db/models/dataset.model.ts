import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType, type Types } from 'mongoose';

/**
 * A dataset: its metadata here, its original bytes in the `datasets` GridFS bucket and its rows in
 * `dataset_rows`. Both are keyed by the GridFS file id (`rows_key`), which exists before the
 * dataset id does: rows are written while the upload streams, the document only once it parsed.
 */
export const datasetSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** Numeric part of the id: storage order for listings, as PySpur lists by primary key. */
    seq: { type: Number, required: true },
    name: { type: String, required: true },
    description: { type: String, default: null },
    /** The uploaded file's own name (sanitized), not a server path. */
    filename: { type: String, required: true },
    format: { type: String, required: true },
    /** Column names are values here, never keys, so dots and dollars are safe as they are. */
    columns: { type: [String], default: [] },
    row_count: { type: Number, required: true },
    chunk_size: { type: Number, required: true },
    byte_size: { type: Number, required: true },
    file_id: { type: Schema.Types.ObjectId, required: true },
    rows_key: { type: String, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'datasets', versionKey: false },
);
/** Unique within a workspace: another workspace may use the same name. */
datasetSchema.index({ workspace_id: 1, name: 1 }, { unique: true });

export type DatasetDoc = WorkspaceOwnedFields &
  Omit<InferSchemaType<typeof datasetSchema>, 'file_id'> & {
    _id: string;
    file_id: Types.ObjectId;
  };
