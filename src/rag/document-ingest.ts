import { fromJsonText, toJsonText } from '../db/json-text';
import type { Models } from '../db/models';
import type { RagChunk, RagDocumentDoc } from '../db/models/rag-document.model';
import type { BoundedParser } from '../parsing/parse-pool';
import { applyTemplates } from '../parsing/documents/chunker';
import { createDocumentStore } from './document-store';
import { settleDocument } from './document-records';
import type { ChunkMetadata } from './schemas';
import { TextProcessingConfig } from '../parsing/documents/text-processing';

export interface IngestOutcome {
  chunks: number;
  failed: boolean;
}

/** The collection or document went away while its job ran: nothing left to do for it. */
export class RagRecordGoneError extends Error {
  override name = 'RagRecordGoneError';
}

export function collectionConfig(json: string): TextProcessingConfig {
  return TextProcessingConfig.parse(fromJsonText(json) ?? {});
}

function chunkMetadata(
  doc: RagDocumentDoc,
  index: number,
  page: number | null,
  custom: Record<string, string>,
): ChunkMetadata {
  return {
    source: 'file',
    source_id: doc.filename,
    created_at: doc.created_at.toISOString(),
    author: null,
    title: doc.filename,
    custom_metadata: custom,
    document_id: doc._id,
    chunk_index: index,
    page_number: page,
  };
}

/**
 * Parses and chunks one document and stores text and chunks (chunk ids `<documentId>_<n>`). A
 * document already done (a retry after a crash that came after the record was written) is not
 * done again. A file that is not readable, or goes past a parse limit, fails alone, with the
 * reason on its record. Parsing and cutting run on a parse thread; templates on the template pool.
 */
export function createDocumentIngest(models: Models, parser: BoundedParser, heartbeat: () => void = () => undefined) {
  const { RagCollection, RagDocument } = models;
  const store = createDocumentStore(models);

  return async function ingestDocument(collectionId: string, documentId: string): Promise<IngestOutcome> {
    const doc = await RagDocument.findById(documentId).lean<RagDocumentDoc>();
    if (!doc) return { chunks: 0, failed: false };
    if (doc.status === 'completed') return { chunks: doc.chunk_count ?? 0, failed: false };
    if (doc.status === 'failed') return { chunks: 0, failed: true };
    const collection = await RagCollection.findById(collectionId).lean();
    if (!collection) throw new RagRecordGoneError(`Collection ${collectionId} was deleted`);
    const config = collectionConfig(collection.text_processing_json);
    const bytes = await store.readBytes(doc);
    let chunks: RagChunk[];
    let text: string;
    try {
      const parsed = await parser.chunks(doc.filename, doc.mime_type ?? null, bytes, config);
      heartbeat();
      text = parsed.text;
      chunks = (await applyTemplates(parsed.pieces, config)).map((c) => ({
        id: `${doc._id}_${c.index}`,
        index: c.index,
        text: c.text,
        metadata_json: toJsonText(chunkMetadata(doc, c.index, c.page_number, c.custom_metadata)),
      }));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await settleDocument(models, documentId, {
        status: 'failed',
        error_message: message,
        chunk_count: 0,
        chunk_pages: 0,
      });
      return { chunks: 0, failed: true };
    }
    heartbeat();
    await store.writeText(documentId, text);
    const pages = await store.writeChunks(collectionId, documentId, chunks);
    await settleDocument(models, documentId, {
      status: 'completed',
      error_message: null,
      chunk_count: chunks.length,
      chunk_pages: pages,
    });
    return { chunks: chunks.length, failed: false };
  };
}
