import type { AsyncBuffer } from 'hyparquet';
import type { ParquetSpent } from './parquet-decode';
import type { DatasetRow, ParseSource } from './types';

/**
 * Parquet via hyparquet (pure JS; hyparquet-compressors adds gzip, zstd, brotli and lz4 to its
 * built-in snappy). Parquet keeps its schema in a footer, so it cannot be read as it streams: the
 * bytes go to GridFS first, then the footer and one row group at a time are read through ranged
 * GridFS reads and decoded on a parse thread (parquet-decode.ts), within the parse limits.
 */
export async function* parseParquet({ stream, stored, parser, fileName }: ParseSource): AsyncIterable<DatasetRow> {
  for await (const chunk of stream) void chunk; // only to move the bytes into GridFS
  const file = await stored();
  const footer = await readFooter(file);
  const groups = await parser.parquetPlan(fileName, footer, file.byteLength);
  let spent: ParquetSpent = { decompressed: 0, extracted: 0 };
  for (const [index, group] of groups.entries()) {
    const bytes = new Uint8Array(await file.slice(group.byteStart, group.byteEnd));
    const read = await parser.parquetRows(fileName, {
      footer,
      fileLength: file.byteLength,
      group,
      bytes,
      index,
      spent,
    });
    spent = read.spent;
    for (const batch of read.batches) yield* JSON.parse(batch) as DatasetRow[];
  }
}

/**
 * The file's metadata and the 8 bytes after it (its length and `PAR1`). What is not a Parquet
 * footer is left for the parse thread to name.
 */
async function readFooter(file: AsyncBuffer): Promise<Uint8Array> {
  const tailLength = Math.min(file.byteLength, 8);
  const tail = new DataView(await file.slice(file.byteLength - tailLength));
  const metadataLength = tailLength === 8 ? tail.getUint32(0, true) : 0;
  return new Uint8Array(await file.slice(Math.max(0, file.byteLength - 8 - metadataLength)));
}
