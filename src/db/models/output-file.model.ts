import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType, type Types } from 'mongoose';

/**
 * An output file (batch results). GridFS files are immutable, so every append is its own GridFS
 * file in the `output_files` bucket, listed here in `parts`; a download streams them in `n`
 * order. `n` lets a retried append (same n) be recognised and skipped.
 */
export const outputFileSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    file_name: { type: String, required: true },
    run_id: { type: String, default: null },
    parts: {
      type: [
        {
          _id: false,
          n: { type: Number, required: true },
          file_id: { type: Schema.Types.ObjectId, required: true },
          bytes: { type: Number, required: true },
          rows: { type: Number, default: 0 },
        },
      ],
      default: [],
    },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'output_files', versionKey: false },
);

export interface OutputFilePart {
  n: number;
  file_id: Types.ObjectId;
  bytes: number;
  /** Lines in the part; a batch numbers its parts by their first row, so n + rows is the next. */
  rows: number;
}
export type OutputFileDoc = WorkspaceOwnedFields &
  Omit<InferSchemaType<typeof outputFileSchema>, 'parts'> & {
    _id: string;
    parts: OutputFilePart[];
  };
