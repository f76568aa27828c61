import { streamArray } from 'stream-json/streamers/stream-array.js';
import { describeJson } from './jsonl';
import { DatasetFormatError, type DatasetRow, type ParseSource, isPlainObject } from './types';

/**
 * A JSON document holding one array of objects, parsed as it streams (stream-json assembles one
 * item at a time), so a large file never sits in memory whole.
 */
export async function* parseJsonArray({ stream }: ParseSource): AsyncIterable<DatasetRow> {
  const items = stream.pipe(streamArray.withParserAsStream({ streamValues: false }));
  // pipe() does not forward errors: a size-limit or GridFS failure must still end the parse.
  stream.on('error', (err) => items.destroy(err));
  let count = 0;
  try {
    for await (const item of items as AsyncIterable<{ key: number; value: unknown }>) {
      if (!isPlainObject(item.value))
        throw new DatasetFormatError(
          `Item ${item.key + 1} of the array: expected a JSON object, found ${describeJson(item.value)}`,
        );
      count++;
      yield item.value;
    }
  } catch (err) {
    if (err instanceof DatasetFormatError || !isParserError(err)) throw err;
    // stream-json reports no offsets; the number of items read so far says where it broke.
    const where = count === 0 ? 'before the first item' : `after item ${count}`;
    const what = /Top-level object should be an array/.test(err.message)
      ? 'the top-level value must be an array of objects'
      : err.message;
    throw new DatasetFormatError(`Invalid JSON ${where}: ${what}`);
  }
}

function isParserError(err: unknown): err is Error {
  return err instanceof Error && /^(Parser |Top-level object)/.test(err.message);
}
