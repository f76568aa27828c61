import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType } from 'mongoose';
import { ragProgressSchema } from './rag-collection.model';

/** A vector index (`VI<n>`) over one collection; its vectors live in the vector store under its id. */
export const vectorIndexSchema = new Schema(
  {
    _id: { type: String, required: true },
    seq: { type: Number, required: true },
    name: { type: String, required: true },
    description: { type: String, default: null },
    collection_id: { type: String, required: true },
    /** processing | ready | failed */
    status: { type: String, required: true },
    document_count: { type: Number, default: 0 },
    chunk_count: { type: Number, default: 0 },
    error_message: { type: String, default: null },
    /** The request's `embedding` object as JSON text (model, vector_db, weights, top_k, threshold). */
    embedding_json: { type: String, required: true },
    dimensions: { type: Number, required: true },
    progress: { type: ragProgressSchema, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'vector_indices', versionKey: false },
);

export type VectorIndexDoc = InferSchemaType<typeof vectorIndexSchema> & { _id: string } & WorkspaceOwnedFields;
