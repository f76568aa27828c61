import { fromJsonText } from '../db/json-text';
import type { Models, VectorIndexDoc } from '../db/models';
import { CHUNKS_PER_PAGE, type RagDocumentDoc } from '../db/models/rag-document.model';
import { RagRecordGoneError, collectionConfig } from './document-ingest';
import { createDocumentStore } from './document-store';
import { type SecretReader, embedTexts } from './embedder';
import { findEmbeddingModel } from './embedding-models';
import { finishIndexRecord, recordIndexPlan, recordIndexProgress, recordIndexStep } from './index-records';
import type { ChunkMetadata, EmbeddingConfig } from './schemas';
import type { VectorRow, VectorStore } from './vector-store';
import type { OutboundFetch } from '../outbound/outbound-fetch';
import type { ChunkPageRef, RagIndexPlan } from '../contracts/rag-contract';

export interface IndexBuildDeps {
  models: Models;
  vectors: VectorStore;
  secret: SecretReader;
  fetch: OutboundFetch;
}

export function indexEmbedding(doc: Pick<VectorIndexDoc, 'embedding_json'>): EmbeddingConfig {
  return fromJsonText<EmbeddingConfig>(doc.embedding_json) as EmbeddingConfig;
}

/** Building an index: plan its pages, embed and store each page, record the outcome. */
export function createIndexBuild({ models, vectors, secret, fetch }: IndexBuildDeps) {
  const { VectorIndex, RagCollection, RagDocument } = models;
  const store = createDocumentStore(models);

  async function loadIndex(indexId: string): Promise<VectorIndexDoc> {
    const index = await VectorIndex.findById(indexId).lean<VectorIndexDoc>();
    if (!index) throw new RagRecordGoneError(`Vector index ${indexId} was deleted`);
    return index;
  }

  return {
    /** The pages of the collection's parsed documents, in upload order. */
    async plan(indexId: string): Promise<RagIndexPlan> {
      const index = await loadIndex(indexId);
      const documents = await RagDocument.find({ collection_id: index.collection_id, status: 'completed' })
        .sort({ seq: 1 })
        .lean<RagDocumentDoc[]>();
      const pages: ChunkPageRef[] = [];
      for (const doc of documents) {
        for (let page = 0; page < (doc.chunk_pages ?? 0); page++) {
          pages.push({
            documentId: doc._id,
            page,
            chunks: Math.min(CHUNKS_PER_PAGE, (doc.chunk_count ?? 0) - page * CHUNKS_PER_PAGE),
          });
        }
      }
      const totalChunks = pages.reduce((sum, p) => sum + p.chunks, 0);
      await recordIndexPlan(models, indexId, documents.length, totalChunks);
      return { pages, totalChunks };
    },

    /** Embeds one page in batches of the collection's `embeddings_batch_size`, then upserts it. */
    async embedPage(
      indexId: string,
      ref: ChunkPageRef,
      done: number,
      total: number,
      heartbeat: () => void,
      signal?: AbortSignal,
    ): Promise<number> {
      const index = await loadIndex(indexId);
      const embedding = indexEmbedding(index);
      const model = findEmbeddingModel(embedding.model);
      if (!model) throw new RagRecordGoneError(`Unknown embedding model ${embedding.model}`);
      const collection = await RagCollection.findById(index.collection_id).lean();
      const batchSize = collection ? collectionConfig(collection.text_processing_json).embeddings_batch_size : 128;
      const chunks = await store.readPage(ref.documentId, ref.page);
      const rows: VectorRow[] = [];
      for (let start = 0; start < chunks.length; start += batchSize) {
        const batch = chunks.slice(start, start + batchSize);
        const vectors = await embedTexts(
          { secret, fetch },
          model,
          batch.map((c) => c.text),
          index.dimensions,
          signal,
        );
        heartbeat();
        batch.forEach((chunk, i) => {
          const meta = fromJsonText<ChunkMetadata>(chunk.metadata_json);
          rows.push({
            chunk_id: chunk.id,
            document_id: ref.documentId,
            document_title: meta?.title ?? meta?.source_id ?? null,
            chunk_number: chunk.index,
            page_number: meta?.page_number ?? null,
            text: chunk.text,
            vector: vectors[i] as number[],
          });
        });
      }
      // The index may have been deleted while this page was embedded: write nothing for it then.
      await loadIndex(indexId);
      await vectors.upsert(indexId, index.dimensions, rows);
      const processed = done + rows.length;
      await recordIndexProgress(models, indexId, processed, total);
      return rows.length;
    },

    /** Full-text and (for large indices) ANN indexes, after the last page. */
    async finalize(indexId: string): Promise<void> {
      await loadIndex(indexId);
      await recordIndexStep(models, indexId, 'optimizing');
      await vectors.finalize(indexId);
    },

    /** Ready with the store's own count of vectors, or failed with the reason. */
    async finish(indexId: string, error: string | null): Promise<void> {
      const index = await VectorIndex.findById(indexId).lean<VectorIndexDoc>();
      if (!index) {
        await vectors.drop(indexId);
        return;
      }
      await finishIndexRecord(models, index, await vectors.count(indexId), error);
    },
  };
}
