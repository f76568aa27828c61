import { StringDecoder } from 'node:string_decoder';
import { DatasetFormatError, type DatasetRow, type ParseSource, isPlainObject } from './types';

/** JSON Lines: one object per line, read line by line; blank lines are skipped. */
export async function* parseJsonl({ stream }: ParseSource): AsyncIterable<DatasetRow> {
  let lineNo = 0;
  for await (const line of lines(stream)) {
    lineNo++;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new DatasetFormatError(`Line ${lineNo}: invalid JSON (${(err as Error).message})`);
    }
    if (!isPlainObject(value))
      throw new DatasetFormatError(`Line ${lineNo}: expected a JSON object, found ${describeJson(value)}`);
    yield value;
  }
}

/** Splits a byte stream into lines (LF or CRLF) without holding more than the current line. */
async function* lines(stream: AsyncIterable<Buffer>): AsyncIterable<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let first = true;
  for await (const chunk of stream) {
    pending += decoder.write(chunk);
    if (first && pending.length > 0) {
      pending = pending.replace(/^\uFEFF/, '');
      first = false;
    }
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      yield pending.slice(0, nl).replace(/\r$/, '');
      pending = pending.slice(nl + 1);
    }
  }
  pending += decoder.end();
  if (pending !== '') yield pending.replace(/\r$/, '');
}

export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
