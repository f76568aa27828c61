import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';

/**
 * Progress of the latest job of a collection or index (PySpur's ProcessingProgressSchema), kept on
 * the record it describes: the api writes it when it starts a job, the job's activities afterwards.
 */
export const ragProgressSchema = new Schema(
  {
    status: { type: String, required: true },
    progress: { type: Number, default: 0 },
    current_step: { type: String, default: 'initializing' },
    total_files: { type: Number, default: 0 },
    processed_files: { type: Number, default: 0 },
    total_chunks: { type: Number, default: 0 },
    processed_chunks: { type: Number, default: 0 },
    error_message: { type: String, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { _id: false },
);

export type RagProgressDoc = InferSchemaType<typeof ragProgressSchema>;

/**
 * A document collection (`DC<n>`). Its text-processing config is JSON text: a chunk template's
 * `metadata_template` has free-form keys, which FerretDB v1 may refuse as document keys.
 */
export const ragCollectionSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    name: { type: String, required: true },
    description: { type: String, default: null },
    /** processing | ready | failed (PySpur's DocumentStatus). */
    status: { type: String, required: true },
    text_processing_json: { type: String, required: true },
    document_count: { type: Number, default: 0 },
    chunk_count: { type: Number, default: 0 },
    error_message: { type: String, default: null },
    /** Number of the latest ingest job: its workflow id is `rag-ingest-<id>-<job>`. */
    job: { type: Number, default: 0 },
    progress: { type: ragProgressSchema, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'rag_collections', versionKey: false },
);
/** Unique within a workspace: another workspace may use the same name. */
ragCollectionSchema.index({ workspace_id: 1, name: 1 }, { unique: true });

export type RagCollectionDoc = InferSchemaType<typeof ragCollectionSchema> & { _id: string } & WorkspaceOwnedFields;
