import type { Models, VectorIndexDoc } from '../db/models';
import { NodeExecutionError, TransientNodeError } from '../nodes/errors';
import type { RagRetriever } from '../nodes/types';
import { EmbeddingError, type SecretReader, embedTexts } from './embedder';
import { findEmbeddingModel } from './embedding-models';
import { hybridRank } from './hybrid';
import { indexEmbedding } from './index-build';
import { toProgressResponse } from './progress';
import type { ProgressResponse, RetrievalRequest, RetrievalResponse } from './schemas';
import type { VectorStore } from './vector-store';
import type { OutboundFetch } from '../outbound/outbound-fetch';

/**
 * A record a retrieval names is not there. Like storage's errors it carries the HTTP status the
 * api answers with (`status`), so this domain never imports the api's error classes.
 */
export class RagRecordNotFound extends Error {
  override name = 'RagRecordNotFound';
  readonly status = 404;
}

export const indexNotFound = () => new RagRecordNotFound('Vector index not found');

/** A query over an index that is still building (or failed): 409, with where the build stands. */
export class IndexNotReadyError extends Error {
  override name = 'IndexNotReadyError';
  readonly status = 409;
  constructor(
    readonly indexId: string,
    readonly progress: ProgressResponse,
  ) {
    const pct = Math.round(progress.progress * 100);
    super(
      progress.status === 'failed'
        ? `Vector index ${indexId} failed to build: ${progress.error_message ?? 'unknown error'}`
        : `Vector index ${indexId} is still being built (${pct}%, ${progress.processed_chunks} of ${progress.total_chunks} chunks embedded); retry when its progress is completed`,
    );
  }
}

export interface RetrieverDeps {
  models: Models;
  vectors: VectorStore;
  secret: SecretReader;
  fetch: OutboundFetch;
}

/**
 * Retrieval over one index: the query is embedded with the index's model, the nearest chunks of
 * that index only are found by cosine similarity (score 1 = identical, higher is better), and
 * those below the score threshold (the request's, else the index's) are left out. With a
 * `keyword_weight` above 0 (the request's, else the index's) the ranking is hybrid: cosine and
 * normalised BM25 full-text scores, weighted (see hybridRank).
 */
export function createRetriever({ models, vectors, secret, fetch }: RetrieverDeps) {
  async function retrieve(indexId: string, request: RetrievalRequest): Promise<RetrievalResponse> {
    const index = await models.VectorIndex.findById(indexId).lean<VectorIndexDoc>();
    if (!index) throw indexNotFound();
    if (index.status !== 'ready') throw new IndexNotReadyError(indexId, toProgressResponse(indexId, index.progress));
    const embedding = indexEmbedding(index);
    const model = findEmbeddingModel(embedding.model);
    if (!model) throw new RagRecordNotFound(`Embedding model ${embedding.model} is not known`);
    const [vector] = await embedTexts({ secret, fetch }, model, [request.query], index.dimensions);
    const threshold = request.score_threshold ?? embedding.score_threshold ?? null;
    const keyword = request.keyword_weight ?? embedding.keyword_weight ?? 0;
    let hits;
    if (keyword > 0) {
      const semantic = request.semantic_weight ?? embedding.semantic_weight ?? 1 - keyword;
      // A wider pool from each search, so a chunk ranked well by one is scored by both.
      const pool = Math.max(request.top_k * 4, 20);
      const [byVector, byKeyword] = await Promise.all([
        vectors.search(indexId, vector as number[], pool),
        vectors.keywordSearch(indexId, request.query, pool),
      ]);
      hits = hybridRank(byVector, byKeyword, { semantic, keyword }, request.top_k);
    } else {
      hits = await vectors.search(indexId, vector as number[], request.top_k);
    }
    const kept = threshold === null ? hits : hits.filter((h) => h.score >= threshold);
    const results = kept.map((h) => ({
      text: h.text,
      score: h.score,
      metadata: {
        document_id: h.document_id,
        chunk_id: h.chunk_id,
        document_title: h.document_title,
        page_number: h.page_number,
        chunk_number: h.chunk_number,
      },
    }));
    return { results, total_results: results.length };
  }

  /** The same retrieval for RetrieverNode: failures become node failures, outages retries. */
  const forNode: RagRetriever = async ({ indexId, query, topK }) => {
    try {
      return await retrieve(indexId, { query, top_k: topK });
    } catch (err) {
      if (err instanceof EmbeddingError && err.retryable)
        throw new TransientNodeError(err.message, err.retryAfterMs, { cause: err });
      if (err instanceof RagRecordNotFound || err instanceof IndexNotReadyError || err instanceof EmbeddingError)
        throw new NodeExecutionError(err.message, { cause: err });
      throw err;
    }
  };

  return { retrieve, forNode };
}

export type Retriever = ReturnType<typeof createRetriever>;
