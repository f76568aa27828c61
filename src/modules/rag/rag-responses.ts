import type { RagCollectionDoc, VectorIndexDoc } from '../../db/models';
import { indexEmbedding } from '../../rag/index-build';
import type { CollectionResponse, IndexResponse } from './rag.schemas';

export function toCollectionResponse(doc: RagCollectionDoc): CollectionResponse {
  return {
    id: doc._id,
    name: doc.name,
    description: doc.description ?? null,
    status: doc.status as CollectionResponse['status'],
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
    document_count: doc.document_count ?? 0,
    chunk_count: doc.chunk_count ?? 0,
    error_message: doc.error_message ?? null,
  };
}

export function toIndexResponse(doc: VectorIndexDoc): IndexResponse {
  const embedding = indexEmbedding(doc);
  return {
    id: doc._id,
    name: doc.name,
    description: doc.description ?? null,
    collection_id: doc.collection_id,
    status: doc.status as IndexResponse['status'],
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
    document_count: doc.document_count ?? 0,
    chunk_count: doc.chunk_count ?? 0,
    error_message: doc.error_message ?? null,
    embedding_model: embedding.model,
    vector_db: embedding.vector_db,
  };
}
