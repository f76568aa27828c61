import fc from 'fast-check';
import type { FuzzBody } from './bodies';
import { junkText } from './values';

/** File names an attacker would try: traversal in every spelling, NUL, header breakers, unicode, huge. */
export const EVIL_FILE_NAMES = [
  '../../etc/passwd',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e/%2e%2e/etc/passwd',
  '/etc/passwd',
  'C:\\Windows\\win.ini',
  '..\\..\\boot.ini',
  'a\u0000b.csv',
  'x.csv\u0000.exe',
  'a\r\nContent-Type: text/html\r\n\r\n.csv',
  'q"uote.csv',
  "sing'le.csv",
  'semi;colon.csv',
  '',
  '.',
  '..',
  '...',
  ' ',
  '.hidden.csv',
  'CON',
  'nul.csv',
  'ünïcödé.csv',
  '😀.jsonl',
  '\u202egpj.csv',
  'a/b/c.json',
  '\\\\srv\\share\\x.csv',
  `${'a'.repeat(5000)}.csv`,
  `${'é'.repeat(2000)}.json`,
];

const CONTENTS = [
  'a,b\n1,2\n',
  'a,b\n"unterminated\n',
  '[{"a":1}]',
  '[1,2]',
  '{"a":1}\n{"b":2}\n',
  '{"a":\n',
  'PAR1',
  'PAR1\u0000\u0000\u0000\u0000PAR1',
  '',
  '\u0000\u0001\u0002',
  'x'.repeat(5000),
];

interface Part {
  /** null: no `name=` in the Content-Disposition. */
  name: string | null;
  filename: string | null;
  contentType: string | null;
  content: Buffer;
  style: 'normal' | 'no-disposition' | 'garbage-header' | 'no-blank-line' | 'lf-only' | 'ext-filename';
}

interface Form {
  boundary: string;
  /** How the Content-Type header names the boundary. */
  declared: 'same' | 'missing' | 'other' | 'quoted' | 'not-multipart';
  parts: Part[];
  end: 'closed' | 'open' | 'truncated';
  cut: number;
  preamble: boolean;
}

/** Part contents: dataset-looking text (parsers run on it), Parquet magic around garbage, random bytes. */
const content = fc.oneof(
  fc.constantFrom(...CONTENTS).map((s) => Buffer.from(s, 'utf8')),
  fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
  fc
    .uint8Array({ maxLength: 200 })
    .map((a) => Buffer.concat([Buffer.from('PAR1'), Buffer.from(a), Buffer.from('PAR1')])),
);

function part(fields: string[], values: Record<string, string[]>): fc.Arbitrary<Part> {
  const known = ['file', 'files', ...fields];
  const ids = Object.values(values).flat();
  const name = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...known) },
    { weight: 2, arbitrary: junkText },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'f'.repeat(10_000),
        'files[]',
        'file[0]',
        'x[99999999]',
        'node_id[7]',
        'a[b][c][d][e][f]',
        '__proto__[polluted]',
        'a[__proto__][polluted]',
        'constructor[prototype][polluted]',
      ),
    },
    { weight: 1, arbitrary: fc.constant(null) },
  );
  return fc.record({
    name,
    filename: fc.option(
      fc.oneof(
        fc.constantFrom(...EVIL_FILE_NAMES),
        junkText,
        fc.constantFrom('data.csv', 'rows.jsonl', 'list.json', 't.parquet', 'a.txt'),
      ),
      { nil: null },
    ),
    contentType: fc.option(
      fc.constantFrom(
        'text/csv',
        'application/json',
        'application/octet-stream',
        'x/y',
        '',
        'text/plain; charset=utf-16',
      ),
      { nil: null },
    ),
    content:
      ids.length > 0
        ? fc.oneof(
            { weight: 3, arbitrary: content },
            { weight: 1, arbitrary: fc.constantFrom(...ids).map((v) => Buffer.from(v)) },
          )
        : content,
    style: fc.constantFrom(
      'normal',
      'normal',
      'normal',
      'normal',
      'no-disposition',
      'garbage-header',
      'no-blank-line',
      'lf-only',
      'ext-filename',
    ),
  });
}

/** Multipart bodies broken in the ways parsers get wrong: boundary, truncation, part count, headers, names. */
export function multipartBody(fields: string[], values: Record<string, string[]>): fc.Arbitrary<FuzzBody> {
  const parts = fc.oneof(
    { weight: 8, arbitrary: fc.array(part(fields, values), { maxLength: 6 }) },
    // Many small parts: counts past every multer limit.
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom('file', 'files', 'x', ...fields), fc.boolean(), fc.constantFrom(30, 200, 1_000))
        .map(([name, isFile, n]) =>
          Array.from({ length: n }, (_, i): Part => ({
            name,
            filename: isFile ? `f${i}.csv` : null,
            contentType: null,
            content: Buffer.from('a\n1\n'),
            style: 'normal',
          })),
        ),
    },
  );
  const form: fc.Arbitrary<Form> = fc.record({
    boundary: fc.oneof(
      fc.constantFrom('----spurfuzz', 'x', '"', 'a b', 'b'.repeat(71), 'b'.repeat(5000)),
      junkText.filter((s) => /^[\x21-\x7e]+$/.test(s)),
    ),
    declared: fc.constantFrom('same', 'same', 'same', 'missing', 'other', 'quoted', 'not-multipart'),
    parts,
    end: fc.constantFrom('closed', 'closed', 'open', 'truncated'),
    cut: fc.nat(),
    preamble: fc.boolean(),
  });
  return form.map(render);
}

function disposition(p: Part): string {
  const name = p.name === null ? '' : `; name="${p.name}"`;
  if (p.filename === null) return `Content-Disposition: form-data${name}`;
  if (p.style === 'ext-filename')
    return `Content-Disposition: form-data${name}; filename*=UTF-8''${encodeURIComponent(p.filename.replace(/[\ud800-\udfff]/g, ''))}`;
  return `Content-Disposition: form-data${name}; filename="${p.filename}"`;
}

function render(form: Form): FuzzBody {
  const nl = (p: Part) => (p.style === 'lf-only' ? '\n' : '\r\n');
  const chunks: Buffer[] = [];
  if (form.preamble) chunks.push(Buffer.from('preamble text\r\n'));
  for (const p of form.parts) {
    const headers: string[] = [];
    if (p.style !== 'no-disposition') headers.push(disposition(p));
    if (p.contentType !== null) headers.push(`Content-Type: ${p.contentType}`);
    if (p.style === 'garbage-header') headers.push('this is not a header', ': empty name');
    const end = p.style === 'no-blank-line' ? nl(p) : nl(p) + nl(p);
    chunks.push(
      Buffer.from(`--${form.boundary}${nl(p)}${headers.join(nl(p))}${end}`, 'utf8'),
      p.content,
      Buffer.from(nl(p)),
    );
  }
  if (form.end !== 'open') chunks.push(Buffer.from(`--${form.boundary}--\r\n`));
  let bytes = Buffer.concat(chunks);
  if (form.end === 'truncated') bytes = bytes.subarray(0, form.cut % (bytes.length + 1));
  const contentType = {
    same: `multipart/form-data; boundary=${form.boundary}`,
    quoted: `multipart/form-data; boundary="${form.boundary}"`,
    missing: 'multipart/form-data',
    other: 'multipart/form-data; boundary=not-the-one',
    'not-multipart': 'application/json',
  }[form.declared];
  return { contentType, bytes };
}
