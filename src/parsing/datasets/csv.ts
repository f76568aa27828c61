import { CsvError, parse } from 'csv-parse';
import { DatasetFormatError, type DatasetRow, type ParseSource } from './types';

/**
 * CSV with a header row, streamed through csv-parse. Cells stay strings: PySpur reads with pandas,
 * which infers numbers, but a guess here would turn ids like "007" into 7 for every later run.
 */
export async function* parseCsv({ stream }: ParseSource): AsyncIterable<DatasetRow> {
  let header: string[] = [];
  const parser = parse({
    bom: true,
    skip_empty_lines: true,
    columns: (names: string[]) => {
      const seen = new Set<string>();
      for (const name of names) {
        if (seen.has(name)) throw new DatasetFormatError(`Line 1: the header names column '${name}' twice`);
        seen.add(name);
      }
      header = names;
      return names;
    },
  });
  // pipe() does not forward errors: a size-limit or GridFS failure must still end the parse.
  stream.on('error', (err) => parser.destroy(err));
  try {
    for await (const record of stream.pipe(parser)) yield record as DatasetRow;
  } catch (err) {
    throw describe(err, header.length);
  }
}

function describe(err: unknown, width: number): unknown {
  if (err instanceof CsvError) {
    const line = (err as CsvError & { lines?: number }).lines;
    if (err.code === 'CSV_RECORD_INCONSISTENT_COLUMNS' || err.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH') {
      const found = (err as CsvError & { record?: unknown[] }).record?.length;
      const fields = found === undefined ? 'a different number of fields' : `${found} field${found === 1 ? '' : 's'}`;
      return new DatasetFormatError(`Line ${line}: ${fields}, but the header has ${width}`);
    }
    return new DatasetFormatError(`Line ${line}: ${err.message}`);
  }
  // csv-parse wraps errors thrown by the `columns` callback; unwrap ours.
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof DatasetFormatError) return cause;
  return err;
}
