import type { Models } from '../db/models';
import type { RagDocumentDoc } from '../db/models/rag-document.model';

// The one module that writes the records of a collection's documents (`rag_documents`): the api
// writes a pending record per upload and removes them; the ingest job settles each one.

export type PendingDocument = Pick<
  RagDocumentDoc,
  '_id' | 'collection_id' | 'seq' | 'filename' | 'mime_type' | 'byte_size' | 'file_id' | 'created_at' | 'updated_at'
>;

export async function insertPendingDocument(models: Models, doc: PendingDocument): Promise<void> {
  await models.RagDocument.create({ ...doc, status: 'pending' });
}

/** A document's outcome: completed with its text and chunk pages, or failed with the reason. */
export async function settleDocument(models: Models, documentId: string, set: Partial<RagDocumentDoc>): Promise<void> {
  await models.RagDocument.updateOne({ _id: documentId }, { $set: { ...set, updated_at: new Date() } });
}

export async function removeDocumentRecord(models: Models, documentId: string): Promise<void> {
  await models.RagDocument.deleteOne({ _id: documentId });
}
