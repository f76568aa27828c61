import type { Readable } from 'node:stream';
import type { AsyncBuffer } from 'hyparquet';

import type { DatasetRow } from '../../db/dataset-row-chunks';
import type { BoundedParser } from '../parse-pool';

export type { DatasetRow };

/** What a format parser gets: the bytes as they arrive, and (after the last byte) random access. */
export interface ParseSource {
  /** The upload's bytes, already counted and copied to GridFS on their way here. */
  stream: Readable;
  /** Random access to the stored bytes; resolves only once the whole upload is in GridFS. */
  stored(): Promise<AsyncBuffer>;
  /** Formats that decompress (Parquet) are decoded on its threads, within the parse limits. */
  parser: BoundedParser;
  fileName: string;
}

export type RowParser = (source: ParseSource) => AsyncIterable<DatasetRow>;

/** A file that cannot be a dataset; the message says what is wrong and where (a line, an item). */
export class DatasetFormatError extends Error {
  override name = 'DatasetFormatError';
}

export function isPlainObject(value: unknown): value is DatasetRow {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
