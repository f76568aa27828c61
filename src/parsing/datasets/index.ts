import { parseCsv } from './csv';
import { parseJsonArray } from './json-array';
import { parseJsonl } from './jsonl';
import { parseParquet } from './parquet';
import { DatasetFormatError, type RowParser } from './types';

/** Formats by file name extension, as PySpur picks its reader at batch time. */
const PARSERS: Record<string, RowParser> = {
  '.csv': parseCsv,
  '.jsonl': parseJsonl,
  '.json': parseJsonArray,
  '.parquet': parseParquet,
};

export const ACCEPTED_EXTENSIONS = Object.keys(PARSERS);

export function formatOf(fileName: string): string {
  const match = /\.[^.]+$/.exec(fileName);
  const ext = match ? match[0].toLowerCase() : '';
  if (!(ext in PARSERS)) {
    const shown = ext === '' ? 'no extension' : `extension '${ext}'`;
    throw new DatasetFormatError(
      `Unsupported file type (${shown}): accepted extensions are ${ACCEPTED_EXTENSIONS.join(', ')}`,
    );
  }
  return ext.slice(1);
}

export function parserFor(format: string): RowParser {
  const parser = PARSERS[`.${format}`];
  if (!parser) throw new Error(`no parser for ${format}`);
  return parser;
}

export { DatasetFormatError };
export type { DatasetRow, ParseSource } from './types';
