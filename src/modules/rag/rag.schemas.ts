import { z } from '../../http/zod';
import type { UploadedFile } from '../../http/uploads';

export const CollectionIdParams = z.object({ collection_id: z.string().min(1).max(200) });
export const DocumentIdParams = CollectionIdParams.extend({ document_id: z.string().min(1).max(200) });
export const IndexIdParams = z.object({ index_id: z.string().min(1).max(200) });

export const ChunkTemplate = z.object({
  enabled: z.boolean().default(false),
  template: z.string().max(64 * 1024).default('{{ text }}'),
  metadata_template: z.record(z.string(), z.string()).nullish().transform((v) => v ?? {}),
});

/** PySpur's TextProcessingConfigSchema, with bounds: sizes are what the ingest really uses. */
export const TextProcessingConfig = z
  .object({
    chunk_token_size: z.number().int().min(1).max(8191).default(200),
    min_chunk_size_chars: z.number().int().min(0).default(350),
    min_chunk_length_to_embed: z.number().int().min(0).default(5),
    embeddings_batch_size: z.number().int().min(1).max(2048).default(128),
    max_num_chunks: z.number().int().min(1).max(1_000_000).default(10000),
    use_vision_model: z.literal(false, { message: 'Vision-model parsing is not supported by this server; set use_vision_model to false' }).default(false),
    vision_model: z.string().nullish(),
    vision_provider: z.string().nullish(),
    template: ChunkTemplate.nullish().transform((t) => t ?? { enabled: false, template: '{{ text }}', metadata_template: {} }),
  })
  .openapi('TextProcessingConfig');
export type TextProcessingConfig = z.output<typeof TextProcessingConfig>;

export const CollectionMetadata = z.object({
  name: z.string().min(1).max(500),
  description: z.string().max(10_000).nullish(),
  text_processing: TextProcessingConfig.default(TextProcessingConfig.parse({})),
});
export type CollectionMetadata = z.output<typeof CollectionMetadata>;

/** A form field holding JSON text, validated by `schema` as if it were the field itself. */
function jsonField<S extends z.ZodType>(schema: S) {
  return z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'Invalid JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema)
    .openapi({ type: 'string', description: 'JSON text' });
}

export const UploadedFileSchema = z
  .custom<UploadedFile>((v) => typeof v === 'object' && v !== null && 'buffer' in v, { message: 'Expected a file' })
  .openapi({ type: 'string', format: 'binary' });

export const CollectionCreateForm = z.object({ metadata: jsonField(CollectionMetadata), files: z.array(UploadedFileSchema).optional() });
export const AddDocumentsForm = z.object({ files: z.array(UploadedFileSchema).min(1) });
export const PreviewChunkForm = z.object({ file: z.array(UploadedFileSchema).length(1), chunking_config: jsonField(TextProcessingConfig) });

export const CollectionResponse = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    status: z.enum(['processing', 'ready', 'failed']),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    document_count: z.number().int(),
    chunk_count: z.number().int(),
    error_message: z.string().nullable(),
  })
  .openapi('DocumentCollectionResponse');
export type CollectionResponse = z.output<typeof CollectionResponse>;

export const ProgressResponse = z
  .object({
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
  })
  .openapi('ProcessingProgress');
export type ProgressResponse = z.output<typeof ProgressResponse>;

const DocumentMetadata = z.object({
  source: z.string(),
  source_id: z.string().nullable(),
  created_at: z.string().nullable(),
  author: z.string().nullable(),
  title: z.string().nullable(),
  custom_metadata: z.record(z.string(), z.string()).nullable(),
});

export const ChunkMetadata = DocumentMetadata.extend({ document_id: z.string(), chunk_index: z.number().int(), page_number: z.number().int().nullable() });
export type ChunkMetadata = z.output<typeof ChunkMetadata>;

export const DocumentWithChunks = z
  .object({
    id: z.string(),
    text: z.string(),
    metadata: DocumentMetadata,
    chunks: z.array(z.object({ id: z.string(), text: z.string(), metadata: ChunkMetadata, embedding: z.array(z.number()).nullable() })),
    status: z.enum(['pending', 'completed', 'failed']).openapi({ description: 'Spur: whether the file was parsed' }),
    error_message: z.string().nullable().openapi({ description: 'Spur: why the file could not be parsed' }),
  })
  .openapi('DocumentWithChunks');
export type DocumentWithChunks = z.output<typeof DocumentWithChunks>;

export const PreviewChunkResponse = z.object({
  chunks: z.array(z.object({ original_text: z.string(), processed_text: z.string(), metadata: z.record(z.string(), z.string()), chunk_index: z.number().int() })),
  total_chunks: z.number().int(),
});

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

export const IndexCreateRequest = z.object({
  name: z.string().min(1).max(500),
  description: z.string().max(10_000).nullish(),
  collection_id: z.string().min(1).max(200),
  embedding: EmbeddingConfig,
});
export type IndexCreateRequest = z.output<typeof IndexCreateRequest>;

export const IndexResponse = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    collection_id: z.string(),
    status: z.enum(['processing', 'ready', 'failed']),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    document_count: z.number().int(),
    chunk_count: z.number().int(),
    error_message: z.string().nullable(),
    embedding_model: z.string(),
    vector_db: z.string(),
  })
  .openapi('VectorIndexResponse');
export type IndexResponse = z.output<typeof IndexResponse>;

export const RetrievalRequest = z.object({
  query: z.string().min(1).max(64 * 1024),
  top_k: z.number().int().min(1).max(100).nullish().transform((v) => v ?? 5),
  score_threshold: z.number().min(-1).max(1).nullish().openapi({ description: 'Minimum cosine similarity (-1..1, higher is closer); default: the index setting' }),
  semantic_weight: z.number().min(0).max(1).nullish(),
  keyword_weight: z.number().min(0).max(1).nullish(),
});
export type RetrievalRequest = z.output<typeof RetrievalRequest>;

export const RetrievalResponse = z
  .object({
    results: z.array(
      z.object({
        text: z.string(),
        score: z.number().openapi({ description: 'Cosine similarity of query and chunk embeddings: 1 identical, higher is better' }),
        metadata: z.object({ document_id: z.string(), chunk_id: z.string(), document_title: z.string().nullable(), page_number: z.number().int().nullable(), chunk_number: z.number().int().nullable() }),
      }),
    ),
    total_results: z.number().int(),
  })
  .openapi('RetrievalResponse');
export type RetrievalResponse = z.output<typeof RetrievalResponse>;

export const Message = z.object({ message: z.string() });

export const EmbeddingModelEntry = z.object({
  id: z.string(),
  provider: z.string(),
  name: z.string(),
  dimensions: z.number().int(),
  max_input_length: z.number().int(),
  supported_encoding_formats: z.array(z.string()).nullable(),
  required_env_vars: z.array(z.string()),
  usable: z.boolean().openapi({ description: 'Spur: every required variable is set' }),
  missing_env_vars: z.array(z.string()),
});

export const VectorStoreEntry = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  requires_api_key: z.boolean(),
  api_key_env_var: z.string().nullable(),
  required_env_vars: z.array(z.string()),
  usable: z.boolean().openapi({ description: 'Spur: this server can store vectors there now' }),
  unusable_reason: z.string().nullable(),
});
