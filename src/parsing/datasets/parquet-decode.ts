import {
  type AsyncBuffer,
  type Compressors,
  type FileMetaData,
  parquetMetadata,
  parquetReadObjects,
  parquetSchema,
} from 'hyparquet';
import { compressors, decompressZstd } from 'hyparquet-compressors';
import { ByteBudget, ParseLimitError, bytesLimit, formatBytes } from '../limits';
import type { DatasetRow } from './types';

/**
 * Parquet decoded on a parse thread (src/parsing/parse-thread.ts). The footer is read first and
 * the sizes it declares are checked before any page is decompressed; then one row group at a
 * time comes in as bytes and goes back as rows. Every page's decompressed size is taken from the
 * file's budget before its buffer is made, and no decompressor may write past that size.
 */

/** A row group to read: its rows (numbered across the file) and the bytes its column chunks span. */
export interface RowGroupPlan {
  rowStart: number;
  rowEnd: number;
  byteStart: number;
  byteEnd: number;
}

/** What one file has spent of its budgets so far, carried from one row group's job to the next. */
export interface ParquetSpent {
  decompressed: number;
  extracted: number;
}

export class ParquetFormatError extends Error {
  override name = 'ParquetFormatError';
}

function readMetadata(footer: Uint8Array): FileMetaData {
  try {
    const metadata = parquetMetadata(footer);
    parquetSchema(metadata); // builds the schema tree now, so a broken schema is named as such
    return metadata;
  } catch (err) {
    throw new ParquetFormatError(`Not a readable Parquet file: ${(err as Error).message}`);
  }
}

/** The row groups to read, once the sizes the footer declares are within `maxBytes`. */
export function planRowGroups(
  footer: Uint8Array,
  fileLength: number,
  fileName: string,
  maxBytes: number,
): RowGroupPlan[] {
  const metadata = readMetadata(footer);
  let declared = 0;
  let rowStart = 0;
  const groups: RowGroupPlan[] = [];
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    let byteStart = fileLength;
    let byteEnd = 0;
    let uncompressed = 0;
    for (const chunk of group.columns) {
      const meta = chunk.meta_data;
      if (!meta) throw new ParquetFormatError('Not a readable Parquet file: parquet column metadata is undefined');
      const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
      byteStart = Math.min(byteStart, start);
      byteEnd = Math.max(byteEnd, start + Number(meta.total_compressed_size));
      uncompressed += Number(meta.total_uncompressed_size);
    }
    declared += Math.max(uncompressed, Number(group.total_byte_size));
    if (rowEnd > rowStart) groups.push({ rowStart, rowEnd, byteStart, byteEnd: Math.min(byteEnd, fileLength) });
    rowStart = rowEnd;
  }
  if (declared > maxBytes)
    throw new ParseLimitError(
      `${fileName}: its row groups declare ${formatBytes(declared)} when uncompressed, more than ${bytesLimit(maxBytes)}; nothing was decompressed`,
    );
  return groups;
}

/** The decompressors of hyparquet-compressors, each taking its output size from the budget first. */
function countedCompressors(budget: ByteBudget): Compressors {
  const counted =
    (decompress: (input: Uint8Array, length: number) => Uint8Array) => (input: Uint8Array, length: number) => {
      budget.take(length);
      return decompress(input, length);
    };
  const { SNAPPY, GZIP, BROTLI, LZ4, LZ4_RAW } = compressors as Required<Compressors>;
  return {
    SNAPPY: counted(SNAPPY),
    GZIP: counted(GZIP),
    BROTLI: counted(BROTLI),
    LZ4: counted(LZ4),
    LZ4_RAW: counted(LZ4_RAW),
    // Given the output buffer, fzstd writes into it; without one it would grow to whatever the frames say.
    ZSTD: counted((input, length) => decompressZstd(input, new Uint8Array(length))),
  };
}

export interface RowGroupJob {
  footer: Uint8Array;
  fileLength: number;
  group: RowGroupPlan;
  /** The bytes of the file from `group.byteStart` to `group.byteEnd`. */
  bytes: Uint8Array;
  fileName: string;
  maxBytes: number;
  spent: ParquetSpent;
}

/**
 * A row group's rows as JSON text, in arrays of about BATCH_CHARS each: text is copied back to
 * the caller's thread in one move, and the caller parses one batch at a time, never a whole row
 * group at once on its event loop.
 */
export interface RowGroupRows {
  batches: string[];
  spent: ParquetSpent;
}

const BATCH_CHARS = 1024 * 1024;

/** The rows of one row group (JSON-safe), and the budgets spent after it. */
export async function readRowGroup(job: RowGroupJob, index: number): Promise<RowGroupRows> {
  const { group, fileName, maxBytes } = job;
  const metadata = readMetadata(job.footer);
  const decompressed = new ByteBudget(
    maxBytes,
    (limit) => `${fileName}: its pages decompress to more than ${limit}`,
    job.spent.decompressed,
  );
  const extracted = new ByteBudget(
    maxBytes,
    (limit) => `${fileName}: its rows come to more than ${limit} of JSON`,
    job.spent.extracted,
  );
  let rows: DatasetRow[];
  try {
    rows = await parquetReadObjects({
      file: rangeBuffer(job),
      metadata,
      rowStart: group.rowStart,
      rowEnd: group.rowEnd,
      compressors: countedCompressors(decompressed),
    });
  } catch (err) {
    decompressed.check();
    throw new ParquetFormatError(
      `Parquet row group ${index + 1} (rows ${group.rowStart + 1}-${group.rowEnd}) could not be read: ${(err as Error).message}`,
    );
  }
  const batches: string[] = [];
  let batch: string[] = [];
  let chars = 0;
  for (const row of rows) {
    const json = JSON.stringify(jsonSafe(row));
    extracted.take(json.length);
    batch.push(json);
    chars += json.length;
    if (chars >= BATCH_CHARS) {
      batches.push(`[${batch.join(',')}]`);
      batch = [];
      chars = 0;
    }
  }
  if (batch.length) batches.push(`[${batch.join(',')}]`);
  return { batches, spent: { decompressed: decompressed.used(), extracted: extracted.used() } };
}

/** The file as hyparquet reads it, holding only the row group's bytes. */
function rangeBuffer({ bytes, group, fileLength }: RowGroupJob): AsyncBuffer {
  return {
    byteLength: fileLength,
    slice(start: number, end = fileLength): ArrayBuffer {
      if (start < group.byteStart || end > group.byteStart + bytes.length)
        throw new Error(`a read of bytes ${start}-${end} lies outside the row group's column chunks`);
      const part = bytes.subarray(start - group.byteStart, end - group.byteStart);
      return part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength) as ArrayBuffer;
    },
  };
}

/**
 * Parquet values as JSON: 64-bit integers as numbers while exact (else decimal text), timestamps
 * as ISO text, binary as base64.
 */
export function jsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = v === undefined ? null : jsonSafe(v);
    return out;
  }
  return value === undefined ? null : value;
}
