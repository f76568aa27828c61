import type { WorkspaceOwnedFields } from '../workspace-owned';
import { Schema, type InferSchemaType, type Types } from 'mongoose';

/**
 * One uploaded file of a collection. Its bytes live in the `rag_files` GridFS bucket, its parsed
 * text in `rag_texts` (GridFS id = document id) and its chunks in `rag_chunk_pages`. The id is
 * chosen by the api at upload, so everything the ingest derives from it (chunk ids) is
 * deterministic and a retried ingest rewrites the same records instead of adding new ones.
 */
export const ragDocumentSchema = new Schema(
  {
    _id: { type: String, required: true },
    collection_id: { type: String, required: true, index: true },
    /** Upload order within the collection. */
    seq: { type: Number, required: true },
    filename: { type: String, required: true },
    mime_type: { type: String, default: null },
    byte_size: { type: Number, required: true },
    file_id: { type: Schema.Types.ObjectId, required: true },
    /** pending | completed | failed */
    status: { type: String, required: true },
    error_message: { type: String, default: null },
    chunk_count: { type: Number, default: 0 },
    chunk_pages: { type: Number, default: 0 },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { collection: 'rag_documents', versionKey: false },
);

export type RagDocumentDoc = WorkspaceOwnedFields &
  Omit<InferSchemaType<typeof ragDocumentSchema>, 'file_id'> & {
    _id: string;
    file_id: Types.ObjectId;
  };

/**
 * Chunks of one document, a page of up to CHUNKS_PER_PAGE per record, addressed by `_id`
 * `<documentId>:<page>` (FerretDB v1 pushes only `_id` lookups down). Chunk metadata is JSON text
 * (custom metadata keys are free-form).
 */
export const ragChunkPageSchema = new Schema(
  {
    _id: { type: String, required: true },
    collection_id: { type: String, required: true },
    document_id: { type: String, required: true },
    page: { type: Number, required: true },
    chunks: {
      type: [
        {
          _id: false,
          id: { type: String, required: true },
          index: { type: Number, required: true },
          text: { type: String, required: true },
          metadata_json: { type: String, required: true },
        },
      ],
      default: [],
    },
  },
  { collection: 'rag_chunk_pages', versionKey: false },
);

export interface RagChunk {
  id: string;
  index: number;
  text: string;
  metadata_json: string;
}
export type RagChunkPageDoc = WorkspaceOwnedFields &
  Omit<InferSchemaType<typeof ragChunkPageSchema>, 'chunks'> & {
    _id: string;
    chunks: RagChunk[];
  };

export const CHUNKS_PER_PAGE = 200;
export const chunkPageId = (documentId: string, page: number) => `${documentId}:${page}`;
