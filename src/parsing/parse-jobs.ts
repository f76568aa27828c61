import type { ParquetSpent, RowGroupJob, RowGroupPlan } from '../modules/datasets/parsers/parquet-decode';
import type { DatasetRow } from '../modules/datasets/parsers/types';
import type { ChunkPiece } from '../rag/chunker';
import type { ParsedDocument } from '../rag/parsed-document';
import type { TextProcessingConfig } from '../rag/schemas';

/** What the api or the worker asks of a parse thread (parse-thread.ts), and what it answers. */

export interface DocumentJob {
  kind: 'document';
  fileName: string;
  mimeType: string | null;
  bytes: Uint8Array;
  maxBytes: number;
  /** Also cut the text into chunks (before any template) with this configuration. */
  chunking: TextProcessingConfig | null;
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

export interface DocumentParse {
  document: ParsedDocument;
  pieces: ChunkPiece[] | null;
}

export type ParseValue = DocumentParse | RowGroupPlan[] | { rows: DatasetRow[]; spent: ParquetSpent };

/**
 * `limit`: over SPUR_PARSE_MAX_BYTES (the message says what); `format`: not a readable file of
 * its type; `time` and `memory`: the pool stopped the thread (parse-pool.ts words the message).
 */
export type ParseOutcome<T = ParseValue> = { ok: true; value: T } | { ok: false; kind: 'limit' | 'format' | 'time' | 'memory'; message: string };
