import path from 'node:path';
import { ThreadPool } from '../threads/thread-pool';
import type { ParquetSpent, RowGroupPlan, RowGroupRows } from './datasets/parquet-decode';
import { DatasetFormatError } from './datasets/types';
import { DocumentParseError } from './documents/parsed-document';
import type { TextProcessingConfig } from './documents/text-processing';
import { ParseLimitError, memoryLimitMessage, timeLimitMessage } from './limits';
import type { ParseLimits } from '../config/settings';
import type { ChunkPreview, DocumentChunks, ParseJob, ParseOutcome } from './parse-jobs';

/**
 * Uploaded files are parsed on parse threads, never on the event loop of the api or the worker:
 * while a PDF, DOCX or Parquet file is read (or refused), the process goes on answering. Each
 * job runs within the limits (SPUR_PARSE_*): decompressed and extracted bytes are counted on the
 * thread, the pool terminates a thread at the time limit, and a thread's heap is limited.
 */

/** Two parses at once per process: parsing is CPU work, and the process has its own to do. */
const THREADS = 2;

// One pool per heap size, shared by every parser of the process (tests start many apis in one).
const pools = new Map<number, ThreadPool<ParseJob, ParseOutcome>>();

function poolFor(memoryMb: number): ThreadPool<ParseJob, ParseOutcome> {
  let pool = pools.get(memoryMb);
  if (!pool) {
    pool = new ThreadPool<ParseJob, ParseOutcome>({
      name: 'parse',
      module: path.join(__dirname, `parse-thread${path.extname(__filename)}`),
      threads: THREADS,
      memoryMb,
      // Every job passes its file's time limit (SPUR_PARSE_TIMEOUT_SECONDS); this is only the fallback.
      stopAfterMs: 60_000,
      stopped: (reason) => ({ ok: false, kind: reason, message: '' }),
    });
    pools.set(memoryMb, pool);
  }
  return pool;
}

export interface BoundedParser {
  /** A document's text and its chunks before templates. */
  chunks(
    fileName: string,
    mimeType: string | null,
    bytes: Uint8Array,
    chunking: TextProcessingConfig,
  ): Promise<DocumentChunks>;
  /** A document's first, middle and last chunk before templates, and how many there are. */
  preview(
    fileName: string,
    mimeType: string | null,
    bytes: Uint8Array,
    chunking: TextProcessingConfig,
  ): Promise<ChunkPreview>;
  /** The row groups of a Parquet file, from its footer (the file's last bytes). */
  parquetPlan(fileName: string, footer: Uint8Array, fileLength: number): Promise<RowGroupPlan[]>;
  /** One row group's rows, given the bytes its column chunks span. */
  parquetRows(
    fileName: string,
    job: {
      footer: Uint8Array;
      fileLength: number;
      group: RowGroupPlan;
      bytes: Uint8Array;
      index: number;
      spent: ParquetSpent;
    },
  ): Promise<RowGroupRows>;
  /** Parses on a thread right now. */
  running(): number;
}

export function createBoundedParser(limits: ParseLimits): BoundedParser {
  const pool = poolFor(limits.memoryMb);

  /** The job's value, or the error its outcome stands for (`formatError` for an unreadable file). */
  async function run<T>(job: ParseJob, fileName: string, formatError: (message: string) => Error): Promise<T> {
    const outcome = await pool.run(job, { stopAfterMs: limits.timeLimitMs });
    if (outcome.ok) return outcome.value as T;
    switch (outcome.kind) {
      case 'limit':
        throw new ParseLimitError(outcome.message);
      case 'time':
        throw new ParseLimitError(timeLimitMessage(fileName, limits));
      case 'memory':
        throw new ParseLimitError(memoryLimitMessage(fileName, limits));
      case 'format':
        throw formatError(outcome.message);
    }
  }

  const documentError = (message: string) => new DocumentParseError(message);
  const datasetError = (message: string) => new DatasetFormatError(message);
  const { maxBytes } = limits;
  return {
    chunks: (fileName, mimeType, bytes, chunking) =>
      run(
        { kind: 'document', output: 'ingest', fileName, mimeType, bytes, maxBytes, chunking },
        fileName,
        documentError,
      ),
    preview: (fileName, mimeType, bytes, chunking) =>
      run(
        { kind: 'document', output: 'preview', fileName, mimeType, bytes, maxBytes, chunking },
        fileName,
        documentError,
      ),
    parquetPlan: (fileName, footer, fileLength) =>
      run({ kind: 'parquet-plan', fileName, footer, fileLength, maxBytes }, fileName, datasetError),
    parquetRows: (fileName, job) => run({ kind: 'parquet-rows', fileName, maxBytes, ...job }, fileName, datasetError),
    running: () => pool.running(),
  };
}
