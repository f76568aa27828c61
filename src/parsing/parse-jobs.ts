import type { RowGroupJob, RowGroupPlan, RowGroupRows } from './datasets/parquet-decode';
import type { ChunkPiece } from './documents/chunker';
import type { TextProcessingConfig } from './documents/text-processing';

/** What the api or the worker asks of a parse thread (parse-thread.ts), and what it answers. */

/**
 * A document to parse and cut into chunks (before any template). `ingest` answers the text and
 * every piece; `preview` only the first, middle and last piece and how many there are, so the
 * api's event loop never copies a large answer back.
 */
export interface DocumentJob {
  kind: 'document';
  output: 'ingest' | 'preview';
  fileName: string;
  mimeType: string | null;
  bytes: Uint8Array;
  maxBytes: number;
  chunking: TextProcessingConfig;
}

export interface ParquetPlanJob {
  kind: 'parquet-plan';
  footer: Uint8Array;
  fileLength: number;
  fileName: string;
  maxBytes: number;
}

export interface ParquetRowsJob extends RowGroupJob {
  kind: 'parquet-rows';
  index: number;
}

export type ParseJob = DocumentJob | ParquetPlanJob | ParquetRowsJob;

export interface DocumentChunks {
  text: string;
  pieces: ChunkPiece[];
}

export interface ChunkPreview {
  picks: ChunkPiece[];
  total: number;
}

export type ParseValue = DocumentChunks | ChunkPreview | RowGroupPlan[] | RowGroupRows;

/**
 * `limit`: over SPUR_PARSE_MAX_BYTES (the message says what); `format`: not a readable file of
 * its type; `time` and `memory`: the pool stopped the thread (parse-pool.ts words the message).
 */
export type ParseOutcome<T = ParseValue> =
  { ok: true; value: T } | { ok: false; kind: 'limit' | 'format' | 'time' | 'memory'; message: string };
