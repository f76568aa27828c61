import { parquetMetadataAsync, parquetReadObjects, parquetSchema } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { DatasetFormatError, type DatasetRow, type ParseSource } from './types';

/**
 * Parquet via hyparquet (pure JS; hyparquet-compressors adds gzip, zstd, brotli and lz4 to its
 * built-in snappy). Parquet keeps its schema in a footer, so it cannot be read as it streams: the
 * bytes go to GridFS first, then row groups are read one at a time through ranged GridFS reads.
 */
export async function* parseParquet({ stream, stored }: ParseSource): AsyncIterable<DatasetRow> {
  for await (const chunk of stream) void chunk; // only to move the bytes into GridFS
  const file = await stored();
  let metadata;
  try {
    metadata = await parquetMetadataAsync(file);
    parquetSchema(metadata); // builds the schema tree now, so a broken schema is named as such
  } catch (err) {
    throw new DatasetFormatError(`Not a readable Parquet file: ${(err as Error).message}`);
  }
  let rowStart = 0;
  for (const [index, group] of metadata.row_groups.entries()) {
    const rowEnd = rowStart + Number(group.num_rows);
    let rows: DatasetRow[];
    try {
      rows = await parquetReadObjects({ file, metadata, rowStart, rowEnd, compressors });
    } catch (err) {
      throw new DatasetFormatError(`Parquet row group ${index + 1} (rows ${rowStart + 1}-${rowEnd}) could not be read: ${(err as Error).message}`);
    }
    for (const row of rows) yield jsonSafe(row) as DatasetRow;
    rowStart = rowEnd;
  }
}

/**
 * Parquet values as JSON: 64-bit integers as numbers while exact (else decimal text), timestamps
 * as ISO text, binary as base64.
 */
export function jsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = v === undefined ? null : jsonSafe(v);
    return out;
  }
  return value === undefined ? null : value;
}
