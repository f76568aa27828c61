import type { Models } from '../db/models';
import { CHUNKS_PER_PAGE, chunkPageId, type RagChunk, type RagDocumentDoc } from '../db/models/rag-document.model';
import { putBytes, readBytes } from '../db/gridfs';

/**
 * The stored parts of a document besides its record: original bytes (`rag_files`), parsed text
 * (`rag_texts`, named after the document id) and chunk pages. Writes are keyed by the document id,
 * so writing twice (a retried ingest) leaves one copy.
 */
export function createDocumentStore(models: Models) {
  const { ragFiles, ragTexts, RagChunkPage } = models;
  const textName = (documentId: string) => `${documentId}.txt`;

  async function removeText(documentId: string): Promise<void> {
    for (const file of await ragTexts.find({ filename: textName(documentId) }).toArray()) {
      await ragTexts.delete(file._id).catch(() => undefined);
    }
  }

  return {
    readBytes: (doc: RagDocumentDoc): Promise<Buffer> => readBytes(ragFiles, doc.file_id),
    async writeText(documentId: string, text: string): Promise<void> {
      await removeText(documentId);
      await putBytes(ragTexts, textName(documentId), { document_id: documentId }, Buffer.from(text, 'utf8'));
    },
    async readText(documentId: string): Promise<string> {
      const [file] = await ragTexts.find({ filename: textName(documentId) }).toArray();
      return file ? (await readBytes(ragTexts, file._id)).toString('utf8') : '';
    },
    /** Pages of CHUNKS_PER_PAGE chunks, each replaced whole under its `_id`. */
    async writeChunks(collectionId: string, documentId: string, chunks: RagChunk[]): Promise<number> {
      let pages = 0;
      for (let start = 0; start < chunks.length; start += CHUNKS_PER_PAGE, pages++) {
        const _id = chunkPageId(documentId, pages);
        await RagChunkPage.replaceOne(
          { _id },
          {
            _id,
            collection_id: collectionId,
            document_id: documentId,
            page: pages,
            chunks: chunks.slice(start, start + CHUNKS_PER_PAGE),
          },
          { upsert: true },
        );
      }
      return pages;
    },
    async readPage(documentId: string, page: number): Promise<RagChunk[]> {
      const doc = await RagChunkPage.findById(chunkPageId(documentId, page)).lean();
      return (doc?.chunks as RagChunk[] | undefined) ?? [];
    },
    async readChunks(doc: RagDocumentDoc): Promise<RagChunk[]> {
      const chunks: RagChunk[] = [];
      for (let page = 0; page < (doc.chunk_pages ?? 0); page++) chunks.push(...(await this.readPage(doc._id, page)));
      return chunks;
    },
    /** Everything of a document but its record. */
    async remove(doc: RagDocumentDoc): Promise<void> {
      for (let page = 0; page < (doc.chunk_pages ?? 0); page++)
        await RagChunkPage.deleteOne({ _id: chunkPageId(doc._id, page) });
      await ragFiles.delete(doc.file_id).catch(() => undefined);
      await removeText(doc._id);
    },
  };
}

export type DocumentStore = ReturnType<typeof createDocumentStore>;
