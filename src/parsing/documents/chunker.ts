import { renderTemplate } from '../../nodes/templates';
import type { ParsedDocument } from './parsed-document';
import type { TextProcessingConfig } from './text-processing';

type Encoding = ReturnType<typeof import('js-tiktoken').getEncoding>;
let cl100k: Encoding | undefined;
/**
 * cl100k_base, the encoding PySpur chunks with (so chunk sizes match), loaded on first use: the
 * library is one 5 MB module holding every encoding's ranks, which every api and worker would
 * otherwise compile as it starts.
 */
const encoder = (): Encoding =>
  (cl100k ??= (require('js-tiktoken') as typeof import('js-tiktoken')).getEncoding('cl100k_base'));

export interface TextChunk {
  /** 0-based position in the document; chunk ids are `<documentId>_<index>`. */
  index: number;
  /** The chunk as cut from the text, and `text` after the collection's template (if enabled). */
  original_text: string;
  text: string;
  page_number: number | null;
  custom_metadata: Record<string, string>;
}

const SENTENCE_ENDS = ['.', '?', '!', '\n'];

/**
 * Splits text into windows of `chunk_token_size` tokens. A window is cut back to its last
 * sentence end when that end lies beyond `min_chunk_size_chars`, and the next window starts where
 * the kept text ended. Pieces of `min_chunk_length_to_embed` characters or fewer are dropped; at
 * most `limit` windows are taken (the rest of an over-long text is not chunked).
 */
export function splitByTokens(text: string, config: TextProcessingConfig, limit: number): string[] {
  const encoding = encoder();
  const tokens = encoding.encode(text, [], []);
  const pieces: string[] = [];
  let position = 0;
  let windows = 0;
  while (position < tokens.length && windows < limit) {
    const window = tokens.slice(position, position + config.chunk_token_size);
    let piece = encoding.decode(window);
    if (piece.trim()) {
      const cut = Math.max(...SENTENCE_ENDS.map((end) => piece.lastIndexOf(end)));
      if (cut !== -1 && cut > config.min_chunk_size_chars) piece = piece.slice(0, cut + 1);
      const cleaned = piece.replace(/\n/g, ' ').trim();
      if (cleaned.length > config.min_chunk_length_to_embed) pieces.push(cleaned);
      windows++;
    }
    const consumed = piece === '' ? window.length : encoding.encode(piece, [], []).length;
    position += Math.max(1, Math.min(window.length, consumed));
  }
  return pieces;
}

/** A chunk as cut from the document, before the collection's template. */
export type ChunkPiece = Omit<TextChunk, 'text' | 'custom_metadata'>;

/** The pieces of a parsed document: page by page for PDFs (so each knows its page), else whole. */
export function splitDocument(parsed: ParsedDocument, config: TextProcessingConfig): ChunkPiece[] {
  const sections = parsed.pages
    ? parsed.pages.map((text, i) => ({ text, page: i + 1 }))
    : [{ text: parsed.text, page: null }];
  const pieces: ChunkPiece[] = [];
  for (const section of sections) {
    const room = config.max_num_chunks - pieces.length;
    if (room <= 0) break;
    for (const piece of splitByTokens(section.text, config, room))
      pieces.push({ index: pieces.length, page_number: section.page, original_text: piece });
  }
  return pieces.slice(0, config.max_num_chunks);
}

/** A piece with the collection's template (if enabled) applied to its text and metadata. */
export async function applyTemplate(piece: ChunkPiece, config: TextProcessingConfig): Promise<TextChunk> {
  const template = config.template;
  if (!template?.enabled) return { ...piece, text: piece.original_text, custom_metadata: {} };
  const context = { text: piece.original_text };
  const metadata: [string, string][] = [];
  for (const [key, t] of Object.entries(template.metadata_template ?? {}))
    metadata.push([key, await renderTemplate(t, context, `metadata_template.${key}`)]);
  return {
    ...piece,
    text: await renderTemplate(template.template, context, 'template'),
    custom_metadata: Object.fromEntries(metadata),
  };
}

/** Pieces with the collection's template applied, one after the other. */
export async function applyTemplates(pieces: ChunkPiece[], config: TextProcessingConfig): Promise<TextChunk[]> {
  const chunks: TextChunk[] = [];
  for (const piece of pieces) chunks.push(await applyTemplate(piece, config));
  return chunks;
}

/** The chunks of a parsed document (the ingest cuts on a parse thread, then applies templates here). */
export const chunkDocument = (parsed: ParsedDocument, config: TextProcessingConfig): Promise<TextChunk[]> =>
  applyTemplates(splitDocument(parsed, config), config);
