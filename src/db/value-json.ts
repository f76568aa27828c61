import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ValueRef } from '../engine/value-ref';
import type { ValueStore } from './value-store';

/**
 * JSON text of `value` as a stream, with every ref replaced by its stored JSON bytes, spliced in
 * chunk by chunk: a 50 MB output is never parsed or copied whole to answer a request. Each ref is
 * first written as a placeholder string carrying a nonce no client can guess, then swapped for
 * the stored bytes. Only what `isRef` accepts (refs Spur sealed) is spliced; anything else is written as it is.
 */
export function jsonWithValues(value: unknown, store: ValueStore, isRef: (v: unknown) => v is ValueRef): Readable {
  const nonce = `spur-value-${randomUUID()}-`;
  const ids: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) =>
    isRef(v) ? `${nonce}${ids.push(v.__spur_value_ref__.id) - 1}` : v,
  );
  const placeholder = new RegExp(`"${nonce}(\\d+)"`, 'g');
  async function* pieces(): AsyncGenerator<Buffer> {
    let at = 0;
    for (const match of text.matchAll(placeholder)) {
      yield Buffer.from(text.slice(at, match.index), 'utf8');
      yield* store.stream(ids[Number(match[1])] as string);
      at = match.index + match[0].length;
    }
    yield Buffer.from(text.slice(at), 'utf8');
  }
  return Readable.from(pieces(), { objectMode: false });
}
