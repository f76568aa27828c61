import path from 'node:path';
import { convert as htmlToText } from 'html-to-text';
import { docxText } from '../docx-text';
import { ByteBudget, ParseLimitError, bytesLimit } from '../limits';
import { pdfPages } from '../pdf-text';
import { DocumentParseError, type ParsedDocument } from './parsed-document';

type Kind = 'pdf' | 'docx' | 'html' | 'text';

const BY_EXTENSION: Record<string, Kind> = {
  '.pdf': 'pdf',
  '.docx': 'docx',
  '.html': 'html',
  '.htm': 'html',
  '.xhtml': 'html',
  '.txt': 'text',
  '.md': 'text',
  '.markdown': 'text',
  '.csv': 'text',
  '.tsv': 'text',
  '.json': 'text',
  '.jsonl': 'text',
  '.rst': 'text',
  '.log': 'text',
  '.xml': 'text',
  '.yaml': 'text',
  '.yml': 'text',
};

const BY_MIME: Record<string, Kind> = {
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
};

/** By extension first (clients often send application/octet-stream), then by content type. */
function kindOf(fileName: string, mimeType: string | null): Kind | null {
  const byExt = BY_EXTENSION[path.extname(fileName).toLowerCase()];
  if (byExt) return byExt;
  const mime = (mimeType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (BY_MIME[mime]) return BY_MIME[mime];
  if (mime.startsWith('text/')) return 'text';
  return null;
}

/** Strict UTF-8 without NUL bytes: anything else is binary, not text. */
function decodeText(bytes: Uint8Array, fileName: string): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new DocumentParseError(`${fileName} is not UTF-8 text (binary data?)`);
  }
  if (text.includes('\u0000'))
    throw new DocumentParseError(`${fileName} is not text: it contains NUL bytes (binary data?)`);
  return text.replace(/^\uFEFF/, '');
}

async function parsePdf(bytes: Uint8Array, fileName: string, maxBytes: number): Promise<ParsedDocument> {
  const pages = await pdfPages(
    bytes,
    new ByteBudget(maxBytes, (limit) => `${fileName}: its PDF streams decompress to more than ${limit}`),
  );
  return { text: pages.join('\n\n'), pages };
}

async function parse(kind: Kind, bytes: Uint8Array, fileName: string, maxBytes: number): Promise<ParsedDocument> {
  switch (kind) {
    case 'pdf':
      return parsePdf(bytes, fileName, maxBytes);
    case 'docx':
      return { text: await docxText(bytes, fileName, maxBytes), pages: null };
    case 'html':
      return {
        text: htmlToText(decodeText(bytes, fileName), {
          wordwrap: false,
          selectors: [
            { selector: 'a', options: { ignoreHref: true } },
            { selector: 'img', format: 'skip' },
          ],
        }),
        pages: null,
      };
    case 'text':
      return { text: decodeText(bytes, fileName), pages: null };
  }
}

/**
 * Text of an uploaded file: PDF (unpdf, PDF.js), DOCX (mammoth), HTML (html-to-text), and plain
 * text, Markdown, CSV, JSON as they are. Unknown types are read as text when they are valid UTF-8.
 * What a file decompresses to, and the text it gives, are each limited to `maxBytes`. Runs on a
 * parse thread (src/parsing/parse-thread.ts), never on the event loop of the api or the worker.
 */
export async function parseDocument(
  fileName: string,
  mimeType: string | null,
  bytes: Uint8Array,
  maxBytes: number,
): Promise<ParsedDocument> {
  const kind = kindOf(fileName, mimeType) ?? 'text';
  let parsed: ParsedDocument;
  try {
    parsed = await parse(kind, bytes, fileName, maxBytes);
  } catch (err) {
    if (err instanceof DocumentParseError || err instanceof ParseLimitError) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw new DocumentParseError(`${fileName} could not be read as ${kind.toUpperCase()}: ${reason}`);
  }
  if (Buffer.byteLength(parsed.text) > maxBytes)
    throw new ParseLimitError(`${fileName}: its text is longer than ${bytesLimit(maxBytes)}`);
  if (!parsed.text.trim()) throw new DocumentParseError(`${fileName} contains no text`);
  return parsed;
}
