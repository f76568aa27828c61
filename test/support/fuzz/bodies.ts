import fc from 'fast-check';
import { deepNesting, junkText, nestingText, weirdJsonValue } from './values';

/** A request body as bytes plus the Content-Type it claims (or none). */
export interface FuzzBody {
  contentType: string | null;
  bytes: Buffer;
}

export const CONTENT_TYPES = [
  null,
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16le',
  'application/json; charset=nope',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/xml',
  '*/*',
  'application/',
  ';;;',
  'json',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=x',
  'multipart/mixed; boundary=x',
  `application/json; ${'a=b; '.repeat(300)}`,
];

const BAD_JSON = [
  '{',
  '}',
  '[',
  '{"a":}',
  '{"a" 1}',
  "{'a':1}",
  '{a:1}',
  '[1,]',
  '{"a":1,}',
  'NaN',
  '-',
  '--1',
  '1e',
  '.5',
  '01',
  '"\\x"',
  '"\\u12"',
  '"unterminated',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":-Infinity}',
  '{"a":undefined}',
  '\ufeff{}',
  '{}{}',
  '{"a":1}garbage',
  '/* c */{}',
  '{"a":1e999999}',
  '{"a":-0}',
  '{"a":123456789012345678901234567890}',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"x":1}}}',
];

/** A JSON value for a field: wrongly typed or extreme, or now and then an existing id (handlers go deeper). */
function fieldValue(values: Record<string, string[]>): fc.Arbitrary<unknown> {
  const ids = Object.values(values).flat();
  return ids.length > 0
    ? fc.oneof({ weight: 5, arbitrary: weirdJsonValue }, { weight: 1, arbitrary: fc.constantFrom(...ids) })
    : weirdJsonValue;
}

/** Any JSON object whose keys are mostly the route's own fields. */
function fieldObject(fields: string[], values: Record<string, string[]>): fc.Arbitrary<Record<string, unknown>> {
  const key =
    fields.length > 0
      ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fields) }, { weight: 1, arbitrary: junkText })
      : junkText;
  return fc.dictionary(key, fieldValue(values), { maxKeys: 6 });
}

/** Deep nesting alone or under one of the route's fields (where a handler would look). */
function nestedBody(fields: string[]): fc.Arbitrary<string> {
  return fc
    .tuple(deepNesting, fc.option(fc.constantFrom(...(fields.length > 0 ? fields : ['a'])), { nil: null }))
    .map(([nest, field]) => {
      const inner = nestingText(nest);
      return field === null ? inner : `{${JSON.stringify(field)}:{"x":${inner}}}`;
    });
}

/** Bytes that are not UTF-8 JSON at all: random binary, UTF-16, truncated valid JSON. */
const notUtf8 = fc.oneof(
  fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
  fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null', 'utf16le')),
  fc.constant(Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00])),
);

/** A body for a JSON route: wrong types, huge values, deep nesting, bad JSON text, wrong content types. */
export function jsonBody(fields: string[], values: Record<string, string[]>): fc.Arbitrary<FuzzBody> {
  const text = fc.oneof(
    { weight: 5, arbitrary: fieldObject(fields, values).map((o) => JSON.stringify(o)) },
    { weight: 1, arbitrary: weirdJsonValue.map((v) => JSON.stringify(v) ?? '') },
    { weight: 2, arbitrary: nestedBody(fields) },
    { weight: 2, arbitrary: fc.constantFrom(...BAD_JSON) },
    {
      weight: 1,
      arbitrary: fc.tuple(fieldObject(fields, values), fc.nat()).map(([o, n]) => {
        const s = JSON.stringify(o);
        return s.slice(0, n % (s.length + 1));
      }),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  );
  const bytes = fc.oneof(
    { weight: 9, arbitrary: text.map((t) => Buffer.from(t, 'utf8')) },
    { weight: 1, arbitrary: notUtf8 },
  );
  const type = fc.oneof(
    { weight: 3, arbitrary: fc.constant('application/json') },
    { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  );
  return fc.record({ contentType: type, bytes });
}
