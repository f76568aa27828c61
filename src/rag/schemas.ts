import { z } from 'zod';

/**
 * The knowledge base's own shapes: what a chunk records, how an
 * index embeds, a job's progress and a retrieval. Plain zod, so the worker and the api share them;
 * the api names some as OpenAPI components (src/modules/rag/rag.schemas.ts) without copying them.
 */

export const ProgressResponse = z.object({
  id: z.string(),
  status: z.enum(['pending', 'processing', 'completed', 'failed']),
  progress: z.number().min(0).max(1),
  current_step: z.string(),
  total_files: z.number().int(),
  processed_files: z.number().int(),
  total_chunks: z.number().int(),
  processed_chunks: z.number().int(),
  error_message: z.string().nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type ProgressResponse = z.output<typeof ProgressResponse>;

export const DocumentMetadata = z.object({
  source: z.string(),
  source_id: z.string().nullable(),
  created_at: z.string().nullable(),
  author: z.string().nullable(),
  title: z.string().nullable(),
  custom_metadata: z.record(z.string(), z.string()).nullable(),
});

export const ChunkMetadata = DocumentMetadata.extend({
  document_id: z.string(),
  chunk_index: z.number().int(),
  page_number: z.number().int().nullable(),
});
export type ChunkMetadata = z.output<typeof ChunkMetadata>;

export const EmbeddingConfig = z.object({
  model: z.string().min(1).max(200),
  vector_db: z.string().min(1).max(100).default('lancedb'),
  search_strategy: z.string().max(100).default('vector'),
  semantic_weight: z.number().min(0).max(1).nullish(),
  keyword_weight: z.number().min(0).max(1).nullish(),
  top_k: z.number().int().min(1).max(100).nullish(),
  score_threshold: z.number().min(-1).max(1).nullish(),
});
export type EmbeddingConfig = z.output<typeof EmbeddingConfig>;

export const RetrievalRequest = z.object({
  query: z
    .string()
    .min(1)
    .max(64 * 1024),
  top_k: z
    .number()
    .int()
    .min(1)
    .max(100)
    .nullish()
    .transform((v) => v ?? 5),
  score_threshold: z
    .number()
    .min(-1)
    .max(1)
    .nullish()
    .describe('Minimum cosine similarity (-1..1, higher is closer); default: the index setting'),
  semantic_weight: z.number().min(0).max(1).nullish(),
  keyword_weight: z.number().min(0).max(1).nullish(),
});
export type RetrievalRequest = z.output<typeof RetrievalRequest>;

export const RetrievalResponse = z.object({
  results: z.array(
    z.object({
      text: z.string(),
      score: z.number().describe('Cosine similarity of query and chunk embeddings: 1 identical, higher is better'),
      metadata: z.object({
        document_id: z.string(),
        chunk_id: z.string(),
        document_title: z.string().nullable(),
        page_number: z.number().int().nullable(),
        chunk_number: z.number().int().nullable(),
      }),
    }),
  ),
  total_results: z.number().int(),
});
export type RetrievalResponse = z.output<typeof RetrievalResponse>;
