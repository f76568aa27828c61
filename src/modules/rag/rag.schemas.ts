import { z } from '../../zod';
import { nameComponent } from '../../http/openapi';
import { StagedFileSchema } from '../../http/uploads';
import {
  ChunkMetadata,
  DocumentMetadata,
  EmbeddingConfig,
  ProgressResponse,
  RetrievalResponse,
} from '../../rag/schemas';
import { TextProcessingConfig } from '../../parsing/documents/text-processing';

// The knowledge base's shapes are the domain's (src/rag/schemas.ts, src/parsing/documents/text-processing.ts); the api only names them.
nameComponent(TextProcessingConfig, 'TextProcessingConfig');
nameComponent(ProgressResponse, 'ProcessingProgress');
nameComponent(RetrievalResponse, 'RetrievalResponse');

export const CollectionIdParams = z.object({ collection_id: z.string().min(1).max(200) });
export const DocumentIdParams = CollectionIdParams.extend({ document_id: z.string().min(1).max(200) });
export const IndexIdParams = z.object({ index_id: z.string().min(1).max(200) });

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

export const CollectionCreateForm = z.object({
  metadata: jsonField(CollectionMetadata),
  files: z.array(StagedFileSchema).optional(),
});
export const AddDocumentsForm = z.object({ files: z.array(StagedFileSchema).min(1) });
export const PreviewChunkForm = z.object({
  file: z.array(StagedFileSchema).length(1),
  chunking_config: jsonField(TextProcessingConfig),
});

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

export const DocumentWithChunks = z
  .object({
    id: z.string(),
    text: z.string(),
    metadata: DocumentMetadata,
    chunks: z.array(
      z.object({
        id: z.string(),
        text: z.string(),
        metadata: ChunkMetadata,
        embedding: z.array(z.number()).nullable(),
      }),
    ),
    status: z.enum(['pending', 'completed', 'failed']).openapi({ description: 'Spur: whether the file was parsed' }),
    error_message: z.string().nullable().openapi({ description: 'Spur: why the file could not be parsed' }),
  })
  .openapi('DocumentWithChunks');
export type DocumentWithChunks = z.output<typeof DocumentWithChunks>;

export const PreviewChunkResponse = z.object({
  chunks: z.array(
    z.object({
      original_text: z.string(),
      processed_text: z.string(),
      metadata: z.record(z.string(), z.string()),
      chunk_index: z.number().int(),
    }),
  ),
  total_chunks: z.number().int(),
});

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
