import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * Dataset rows, `chunk_size` rows per document under `_id` `<rows_key>:<chunk>`, so any row range
 * is a few `_id` lookups (the only lookups FerretDB v1 pushes down). `rows` is the JSON text of the
 * chunk's row array (user keys may hold '.' or '$'). A chunk whose text is too long for one
 * document continues in `<rows_key>:<chunk>:<part>` documents; `parts` counts them all.
 */
export const datasetRowSchema = new Schema(
  {
    _id: { type: String, required: true },
    /** The upload the chunk belongs to: lets a failed upload or a delete remove every piece. */
    rows_key: { type: String, required: true },
    rows: { type: String, required: true },
    parts: { type: Number, default: 1 },
  },
  { collection: 'dataset_rows', versionKey: false },
);
datasetRowSchema.index({ rows_key: 1 });

export type DatasetRowDoc = InferSchemaType<typeof datasetRowSchema> & { _id: string } & WorkspaceOwnedFields;
