import { z } from 'zod';

/**
 * How a knowledge base's files are cut into chunks (PySpur's TextProcessingConfig): the parse
 * threads chunk with it, and the api and the ingest jobs validate it.
 */
export const ChunkTemplate = z.object({
  enabled: z.boolean().default(false),
  template: z
    .string()
    .max(64 * 1024)
    .default('{{ text }}'),
  metadata_template: z
    .record(z.string(), z.string())
    .nullish()
    .transform((v) => v ?? {}),
});

/** PySpur's TextProcessingConfigSchema, with bounds: sizes are what the ingest really uses. */
export const TextProcessingConfig = z.object({
  chunk_token_size: z.number().int().min(1).max(8191).default(200),
  min_chunk_size_chars: z.number().int().min(0).default(350),
  min_chunk_length_to_embed: z.number().int().min(0).default(5),
  embeddings_batch_size: z.number().int().min(1).max(2048).default(128),
  max_num_chunks: z.number().int().min(1).max(1_000_000).default(10000),
  use_vision_model: z
    .literal(false, { message: 'Vision-model parsing is not supported by this server; set use_vision_model to false' })
    .default(false),
  vision_model: z.string().nullish(),
  vision_provider: z.string().nullish(),
  template: ChunkTemplate.nullish().transform(
    (t) => t ?? { enabled: false, template: '{{ text }}', metadata_template: {} },
  ),
});
export type TextProcessingConfig = z.output<typeof TextProcessingConfig>;
