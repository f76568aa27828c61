import { z } from '../../zod';

export const DatasetIdParams = z.object({ dataset_id: z.string().min(1).max(200) });

export const DatasetUploadQuery = z.object({
  name: z.string().min(1).max(500),
  description: z.string().max(10_000).default(''),
});
export type DatasetUploadQuery = z.output<typeof DatasetUploadQuery>;

/**
 * The multipart body. The upload middleware parses and stores the `file` part while it streams and
 * hands on the new dataset's id in its place, so "no file part" is still a missing `file` (422).
 */
export const DatasetUploadForm = z.object({
  file: z.string().openapi({
    type: 'string',
    format: 'binary',
    description: 'A .csv, .jsonl, .json (array of objects) or .parquet file',
  }),
});

/** PySpur's DatasetResponseSchema plus `row_count` and `columns` (what a batch needs to know). */
export const DatasetResponse = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    filename: z.string().openapi({ description: 'The uploaded file name (PySpur gave a server path here)' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    row_count: z.number().int(),
    columns: z.array(z.string()),
  })
  .openapi('DatasetResponse');
export type DatasetResponse = z.output<typeof DatasetResponse>;

export const DatasetDeleted = z.object({ message: z.literal('Dataset deleted') });
