import fc from 'fast-check';

/** Texts that have broken parsers before: number edge cases as text, paths, NUL, operators, prototype keys. */
export const NASTY_TEXTS = [
  '',
  ' ',
  '0',
  '-0',
  '+1',
  '-1',
  '1.5',
  '1e308',
  '-1e308',
  '1e309',
  '1e-400',
  'NaN',
  'Infinity',
  '-Infinity',
  '9007199254740993',
  '99999999999999999999999999999999',
  '0x10',
  '1_000',
  ' 7 ',
  'null',
  'undefined',
  'true',
  'false',
  '[]',
  '{}',
  '{"$ne":null}',
  '$where',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '../../etc/passwd',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e/',
  '/etc/passwd',
  'C:\\Windows\\win.ini',
  '\\\\host\\share',
  'a\u0000b.csv',
  '\u0000',
  '%00',
  '%',
  '%zz',
  '%E0%A4%A',
  '\r\nX-Injected: 1',
  '"',
  "'",
  '`',
  '<script>',
  '{{7*7}}',
  '😀',
  '\ud800',
  '\udfff',
  '\u202eexe.txt',
  'ＡＢＣ',
  '\ufeff',
  'é',
  'Ω≈ç√',
  '\u0085',
  '\u2028',
];

/** Long enough to pass every limit that should stop them; past 16 KiB a path or query is refused by node (431). */
const LONG_LENGTHS = [300, 1_000, 5_000, 20_000];

/** Any text a client could send: nasty constants, random unicode (lone surrogates included), very long runs. */
export const junkText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_TEXTS) },
  { weight: 3, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...LONG_LENGTHS), fc.constantFrom('a', '.', '/', '%', 'é', '😀', '\u0000'))
      .map(([n, c]) => c.repeat(n)),
  },
);

/** Values of the wrong type, long values and edge numbers, for JSON fields. */
const ordinaryWeirdValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: junkText },
  { weight: 2, arbitrary: fc.double() },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      Number.MAX_VALUE,
      -Number.MAX_VALUE,
      Number.MIN_VALUE,
      Number.MAX_SAFE_INTEGER + 2,
      -0,
      0,
      1,
      -1,
      1e21,
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      null,
      true,
      false,
      [],
      {},
      [null],
      { '': null },
      { $ne: null },
      JSON.parse('{"__proto__":{"polluted":true}}') as unknown,
    ),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(junkText, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(junkText, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }) },
);

/** …and now and then a huge string (a few percent of bodies), under the 10 MB body limit. */
export const weirdJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 60, arbitrary: ordinaryWeirdValue },
  { weight: 1, arbitrary: fc.constantFrom(200_000, 2_000_000).map((n) => 'x'.repeat(n)) },
);

/**
 * Nesting as deep as given: `[[[…]]]`, `{"a":{"a":…}}` or both alternating, optionally holding a
 * value at the bottom. Built as text, since the 100k-deep ones would blow the stack of
 * JSON.stringify on the client side too.
 */
export interface DeepNesting {
  depth: number;
  shape: 'array' | 'object' | 'mixed';
  closed: boolean;
}

export const deepNesting: fc.Arbitrary<DeepNesting> = fc.record({
  depth: fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 300 }) },
    { weight: 2, arbitrary: fc.constantFrom(257, 1_000, 5_000, 20_000, 100_000) },
  ),
  shape: fc.constantFrom('array', 'object', 'mixed'),
  closed: fc.boolean(),
});

export function nestingText({ depth, shape, closed }: DeepNesting): string {
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < depth; i++) {
    const arr = shape === 'array' || (shape === 'mixed' && i % 2 === 0);
    open.push(arr ? '[' : '{"a":');
    close.push(arr ? ']' : '}');
  }
  const bottom = shape === 'array' ? '' : '1';
  return open.join('') + bottom + (closed ? close.reverse().join('') : '');
}

/** Percent-encodes every code point; a lone surrogate becomes the (invalid) UTF-8 of its code unit. */
function encodeLoose(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return text.replace(/[\s\S]/gu, (ch) => {
      const unit = ch.charCodeAt(0);
      if (ch.length > 1 || unit < 0xd800 || unit > 0xdfff) return encodeURIComponent(ch);
      return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    });
  }
}

/** How a text is put into a URL: percent-encoded, or raw bytes the server must decode itself. */
export function encodeForUrl(text: string, mode: 'encoded' | 'raw'): string {
  if (mode === 'encoded') return encodeLoose(text);
  // node's client refuses spaces, controls and code points beyond latin-1 in a path: escape only those.
  return text.replace(/[^\u0021-\u00ff]|[#?]/gu, encodeLoose);
}
