import { readBytes } from '../../db/gridfs';
import { fromJsonText } from '../../db/json-text';
import type { Models } from '../../db/models';
import type { RagDocumentDoc } from '../../db/models/rag-document.model';
import { BadRequestError, NotFoundError, PayloadTooLargeError } from '../../errors';
import { type Page, pageBounds } from '../../db/paging';
import type { StagedFile } from '../../http/gridfs-upload-storage';
import { applyTemplate } from '../../parsing/documents/chunker';
import type { CollectionService } from './collections.service';
import { createDocumentStore } from '../../rag/document-store';
import { recountCollection } from '../../rag/collection-records';
import { removeDocumentRecord } from '../../rag/document-records';
import { setIndexChunkCount } from '../../rag/index-records';
import { DocumentParseError } from '../../parsing/documents/parsed-document';
import { ParseLimitError } from '../../parsing/limits';
import type { BoundedParser } from '../../parsing/parse-pool';
import type { DocumentWithChunks } from './rag.schemas';
import type { ChunkMetadata } from '../../rag/schemas';
import type { TextProcessingConfig } from '../../parsing/documents/text-processing';
import type { VectorStore } from '../../rag/vector-store';

export interface DocumentServiceDeps {
  models: Models;
  collections: CollectionService;
  vectors: VectorStore;
  parser: BoundedParser;
}

/** A collection's documents: listing with chunks, deleting one (also from its indices), previews. */
export function createDocumentService({ models, collections, vectors, parser }: DocumentServiceDeps) {
  const { RagDocument, VectorIndex } = models;
  const store = createDocumentStore(models);

  async function toResponse(doc: RagDocumentDoc): Promise<DocumentWithChunks> {
    const chunks = await store.readChunks(doc);
    return {
      id: doc._id,
      text: await store.readText(doc._id),
      metadata: {
        source: 'file',
        source_id: doc.filename,
        created_at: doc.created_at.toISOString(),
        author: null,
        title: doc.filename,
        custom_metadata: null,
      },
      chunks: chunks.map((c) => ({
        id: c.id,
        text: c.text,
        metadata: fromJsonText<ChunkMetadata>(c.metadata_json) as ChunkMetadata,
        embedding: null,
      })),
      status: doc.status as DocumentWithChunks['status'],
      error_message: doc.error_message ?? null,
    };
  }

  return {
    /** One page of the collection's documents in storage order, each with its text and chunks. */
    async list(collectionId: string, page: Page): Promise<DocumentWithChunks[]> {
      await collections.load(collectionId);
      const { skip, limit } = pageBounds(page);
      const documents = await RagDocument.find({ collection_id: collectionId })
        .sort({ seq: 1 })
        .skip(skip)
        .limit(limit)
        .lean<RagDocumentDoc[]>();
      const out: DocumentWithChunks[] = [];
      for (const doc of documents) out.push(await toResponse(doc));
      return out;
    },

    /** Removes the document, its chunks and its vectors in every index of the collection. */
    async remove(collectionId: string, documentId: string): Promise<{ message: string }> {
      const collection = await collections.load(collectionId);
      const doc = await RagDocument.findById(documentId).lean<RagDocumentDoc>();
      if (!doc || doc.collection_id !== collectionId)
        throw new NotFoundError('Document not found in collection', 'DOCUMENT_NOT_FOUND');
      if (collection.status === 'processing') throw collections.busy(collectionId);
      const indices = await VectorIndex.find({ collection_id: collectionId }, { _id: 1 }).lean<{ _id: string }[]>();
      for (const index of indices) await vectors.deleteDocument(index._id, documentId);
      await removeDocumentRecord(models, documentId);
      await store.remove(doc);
      await recountCollection(models, collectionId);
      for (const index of indices) await setIndexChunkCount(models, index._id, await vectors.count(index._id));
      return { message: 'Document deleted successfully' };
    },

    /**
     * How a file would be chunked: its first, middle and last chunk (only these get the template),
     * and how many there are. The upload stays staged (deleted with the request); it is read back
     * whole because parsers need it so. Parsing and cutting happen on a parse thread; a file over
     * a parse limit is a 413 naming the limit.
     */
    async preview(file: StagedFile, config: TextProcessingConfig) {
      const bytes = await readBytes(collections.staging.bucket, file.gridfsId);
      try {
        const { picks, total } = await parser.preview(
          file.originalname || 'file',
          file.mimetype || null,
          bytes,
          config,
        );
        if (!total) throw new BadRequestError('No chunks could be generated with the provided configuration');
        const chunks = [];
        for (const piece of picks) {
          const c = await applyTemplate(piece, config);
          chunks.push({
            original_text: c.original_text,
            processed_text: c.text,
            metadata: Object.keys(c.custom_metadata).length ? c.custom_metadata : { type: 'text_chunk' },
            chunk_index: piece.index + 1,
          });
        }
        return { chunks, total_chunks: total };
      } catch (err) {
        if (err instanceof ParseLimitError) throw new PayloadTooLargeError(`Error previewing chunk: ${err.message}`);
        if (err instanceof DocumentParseError || (err instanceof Error && err.name === 'NodeExecutionError'))
          throw new BadRequestError(`Error previewing chunk: ${err.message}`);
        throw err;
      }
    },
  };
}

export type DocumentService = ReturnType<typeof createDocumentService>;
