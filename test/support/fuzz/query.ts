import fc from 'fast-check';
import { encodeForUrl, junkText } from './values';

const ODD_KEYS = ['page', 'page_size', '__proto__', 'constructor', '$where', '', '[]', 'a[b][c]', 'a.b'];
const RAW_TAILS = ['&', '&&', '=', '==', '%', '%zz', '%00', '%E0%A4%A', '%C0%AE', 'a=%FF', ';a=1', '+', '%2B', '#frag'];

/**
 * A query string: the route's own parameters and odd keys, repeated, in array and object
 * notation, with junk values encoded or raw, and broken escapes tacked on. Returns the text after `?`.
 */
export function queryString(params: string[]): fc.Arbitrary<string> {
  const base = [...params, ...ODD_KEYS];
  const key = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...base) },
    { weight: 1, arbitrary: fc.constantFrom(...base).map((k) => `${k}[]`) },
    { weight: 1, arbitrary: fc.constantFrom(...base).map((k) => `${k}[$ne]`) },
    { weight: 1, arbitrary: junkText },
  );
  const pair = fc.record({
    key,
    value: fc.option(junkText, { nil: null }),
    mode: fc.constantFrom<'encoded' | 'raw'>('encoded', 'encoded', 'raw'),
  });
  return fc
    .tuple(
      fc.array(pair, { maxLength: 8 }),
      fc.option(fc.constantFrom(...RAW_TAILS), { nil: null }),
      fc.constantFrom(1, 1, 1, 1, 50, 2_000),
    )
    .map(([pairs, tail, repeat]) => {
      const text = pairs
        .map(({ key: k, value, mode }) =>
          value === null ? encodeForUrl(k, mode) : `${encodeForUrl(k, mode)}=${encodeForUrl(value, mode)}`,
        )
        .join('&');
      // Many repetitions of short parameters: arrays of thousands of values.
      const repeated =
        repeat === 1 || text === '' || text.length > 100 ? text : Array.from({ length: repeat }, () => text).join('&');
      return repeated + (tail ?? '');
    });
}
