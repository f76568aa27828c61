import { constants, crc32, deflateRawSync, gzipSync } from 'node:zlib';
import { parquetWriteBuffer } from 'hyparquet-writer';

/**
 * Files that are small on the wire and huge once decompressed, built here (nothing binary is
 * committed). Each is a valid file of its type: only its size when inflated is hostile.
 */

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;

/**
 * `head`, then `repeat` taken `times`, then `tail`, as one raw deflate stream of a few KB per GiB:
 * the repeated part is compressed once, flushed to a byte boundary with no back-references out of
 * it, and its bytes repeated.
 */
export interface Deflated {
  data: Buffer;
  size: number;
  crc: number;
  adler: number;
}

export function deflateRepeated(head: string, repeat: Buffer, times: number, tail: string): Deflated {
  const full = { finishFlush: constants.Z_FULL_FLUSH, level: 9 };
  const headBytes = Buffer.from(head);
  const tailBytes = Buffer.from(tail);
  const middle = deflateRawSync(repeat, full);
  const data = Buffer.concat([
    deflateRawSync(headBytes, full),
    ...Array<Buffer>(times).fill(middle),
    deflateRawSync(tailBytes),
  ]);
  let crc = crc32(headBytes);
  let adler = adler32(headBytes);
  const repeatAdler = adler32(repeat);
  for (let i = 0; i < times; i++) {
    crc = crc32(repeat, crc);
    adler = adlerCombine(adler, repeatAdler, repeat.length);
  }
  return {
    data,
    size: headBytes.length + repeat.length * times + tailBytes.length,
    crc: crc32(tailBytes, crc),
    adler: adlerCombine(adler, adler32(tailBytes), tailBytes.length),
  };
}

function adler32(bytes: Buffer): number {
  let a = 1;
  let b = 0;
  for (const byte of bytes) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** The Adler-32 of `first` followed by a part of `length` bytes whose own Adler-32 is `second`. */
function adlerCombine(first: number, second: number, length: number): number {
  const [a1, b1] = [first & 0xffff, first >>> 16];
  const [a2, b2] = [second & 0xffff, second >>> 16];
  const a = (a1 + a2 - 1 + 65521) % 65521;
  const b = (b1 + (length % 65521) * ((a1 - 1 + 65521) % 65521) + b2 - (length % 65521) + 2 * 65521) % 65521;
  return ((b << 16) | a) >>> 0;
}

interface ZipPart {
  name: string;
  deflated: Deflated;
  /** The uncompressed size the headers claim (the true size unless a test makes them lie). */
  declared?: number;
}

/** A ZIP archive of deflated entries (what DOCX files are). */
export function zipArchive(parts: ZipPart[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const part of parts) {
    const name = Buffer.from(part.name);
    const declared = part.declared ?? part.deflated.size;
    const fields = (header: Buffer, at: number) => {
      header.writeUInt16LE(20, at); // version needed
      header.writeUInt16LE(0, at + 2); // flags
      header.writeUInt16LE(8, at + 4); // deflate
      header.writeUInt32LE(0, at + 6); // time, date
      header.writeUInt32LE(part.deflated.crc, at + 10);
      header.writeUInt32LE(part.deflated.data.length, at + 14);
      header.writeUInt32LE(declared, at + 18);
      header.writeUInt16LE(name.length, at + 22);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    fields(local, 4);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    fields(central, 6);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, part.deflated.data);
    centrals.push(central, name);
    offset += local.length + name.length + part.deflated.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const deflated = (text: string) => deflateRepeated(text, Buffer.alloc(0), 0, '');

const DOCUMENT_HEAD =
  '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>';
const DOCUMENT_TAIL = '</w:body></w:document>';

/** A valid DOCX whose word/document.xml body is `head`, `repeat` taken `times`, `tail`; its headers may claim `declared` bytes instead. */
function docx(head: string, repeat: Buffer, times: number, tail: string, declared?: number): Buffer {
  return zipArchive([
    {
      name: '[Content_Types].xml',
      deflated: deflated(
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
      ),
    },
    {
      name: '_rels/.rels',
      deflated: deflated(
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
      ),
    },
    {
      name: 'word/document.xml',
      deflated: deflateRepeated(DOCUMENT_HEAD + head, repeat, times, tail + DOCUMENT_TAIL),
      ...(declared === undefined ? {} : { declared }),
    },
  ]);
}

/** A DOCX whose word/document.xml is one paragraph of about `size` bytes of repeated words; `declaredSize`: what its ZIP headers claim instead. */
export function docxBomb(size: number, declaredSize?: number): Buffer {
  return docx(
    '<w:p><w:r><w:t>',
    Buffer.alloc(MiB, 'bomb text '),
    Math.ceil(size / MiB),
    '</w:t></w:r></w:p>',
    declaredSize,
  );
}

/** A DOCX of `size` bytes of one-letter paragraphs: small once parsed, but slow to parse. */
export function slowDocx(size: number): Buffer {
  const paragraph = '<w:p><w:r><w:t>x</w:t></w:r></w:p>';
  return docx(
    '',
    Buffer.alloc(Math.floor(MiB / paragraph.length) * paragraph.length, paragraph),
    Math.ceil(size / MiB),
    '',
  );
}

/** A valid one-page PDF whose FlateDecode content stream inflates to about `size` bytes of text-showing operators. */
export function pdfBomb(size: number): Buffer {
  const line = 'BT /F1 12 Tf 72 720 Td (bomb text) Tj ET\n';
  const repeat = Buffer.alloc(Math.floor(MiB / line.length) * line.length, line);
  const content = deflateRepeated('', repeat, Math.ceil(size / repeat.length), '');
  // The zlib wrapping PDF's FlateDecode expects: a header, the raw stream, the Adler-32 of the content.
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(content.adler);
  const stream = Buffer.concat([Buffer.from([0x78, 0xda]), content.data, adler]);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [4 0 R] /Count 1 >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>',
  ].map((text) => Buffer.from(text, 'latin1'));
  objects.push(
    Buffer.concat([
      Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`),
      stream,
      Buffer.from('\nendstream'),
    ]),
  );
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let at = parts[0]?.length ?? 0;
  objects.forEach((body, i) => {
    offsets.push(at);
    const object = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(object);
    at += object.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/**
 * A valid Parquet file of `rows` rows, each one string of `rowBytes` bytes, in gzip-compressed
 * pages; row groups of 16 rows, so building it never holds more than 16 rows encoded.
 */
export function parquetBomb(rows: number, rowBytes: number): Buffer {
  const value = 'b'.repeat(rowBytes);
  const out = parquetWriteBuffer({
    rowGroupSize: 16,
    columnData: [{ name: 'text', data: Array<string>(rows).fill(value), type: 'STRING', encoding: 'PLAIN' }],
    codec: 'GZIP',
    compressors: { GZIP: (bytes: Uint8Array) => new Uint8Array(gzipSync(bytes, { level: 9 })) },
  });
  return Buffer.from(out);
}
