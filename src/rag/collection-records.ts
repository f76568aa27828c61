import { trusted } from 'mongoose';
import type { Models } from '../db/models';
import type { RagCollectionDoc } from '../db/models/rag-collection.model';
import type { RagDocumentDoc } from '../db/models/rag-document.model';
import { progressUpdate, startingProgress } from './progress';

// The one module that writes document collections (`rag_collections`): the api creates, claims and
// removes them; the ingest job in the worker records its progress and its end.

export async function insertCollection(models: Models, doc: RagCollectionDoc): Promise<void> {
  await models.RagCollection.create(doc);
}

/**
 * Marks an idle collection as processing job `job` of `files` files; false when another request got
 * there first (of two requests that both saw it idle, one starts a job).
 */
export async function claimCollectionJob(
  models: Models,
  collectionId: string,
  job: number,
  files: number,
): Promise<boolean> {
  const now = new Date();
  const claimed = await models.RagCollection.updateOne(
    { _id: collectionId, status: trusted({ $ne: 'processing' }) },
    {
      $set: {
        status: 'processing',
        error_message: null,
        job,
        updated_at: now,
        progress: startingProgress(now, { files, chunks: 0 }, 'parsing'),
      },
    },
  );
  return claimed.matchedCount > 0;
}

/** A job that could not start: the collection fails with the reason, never stays processing. */
export async function failCollectionJob(models: Models, collectionId: string, message: string): Promise<void> {
  await models.RagCollection.updateOne(
    { _id: collectionId },
    {
      $set: {
        status: 'failed',
        error_message: message,
        'progress.status': 'failed',
        'progress.error_message': message,
        'progress.updated_at': new Date(),
      },
    },
  );
}

/** The counts recomputed from the collection's documents (after an upload or a document's removal). */
export async function recountCollection(models: Models, collectionId: string): Promise<void> {
  const counts = await collectionCounts(models, collectionId);
  await models.RagCollection.updateOne(
    { _id: collectionId },
    { $set: { document_count: counts.document_count, chunk_count: counts.chunk_count, updated_at: new Date() } },
  );
}

export async function removeCollection(models: Models, collectionId: string): Promise<void> {
  await models.RagCollection.deleteOne({ _id: collectionId });
}

/** Counts of a collection that are true: its documents, and the chunks of those that were parsed. */
export async function collectionCounts(
  models: Models,
  collectionId: string,
): Promise<{ documents: RagDocumentDoc[]; document_count: number; chunk_count: number }> {
  const documents = await models.RagDocument.find({ collection_id: collectionId })
    .sort({ seq: 1 })
    .lean<RagDocumentDoc[]>();
  return {
    documents,
    document_count: documents.length,
    chunk_count: documents.reduce((sum, d) => sum + (d.chunk_count ?? 0), 0),
  };
}

/** The collection's progress after one more document of its job. */
export async function recordIngestProgress(
  models: Models,
  collectionId: string,
  files: { done: number; total: number },
  chunks: number,
): Promise<void> {
  await models.RagCollection.updateOne(
    { _id: collectionId },
    {
      $set: progressUpdate({
        status: 'processing',
        current_step: 'chunking',
        processed_files: files.done,
        total_files: files.total,
        processed_chunks: chunks,
        total_chunks: chunks,
        progress: files.total ? files.done / files.total : 1,
      }),
    },
  );
}

/**
 * The end of an ingest job: counts recomputed from the documents, the status `ready` unless the
 * job broke or none of its files could be read, and a message naming each file that failed.
 */
export async function finishIngest(
  models: Models,
  collectionId: string,
  jobDocumentIds: string[],
  error: string | null,
): Promise<void> {
  const collection = await models.RagCollection.findById(collectionId).lean();
  if (!collection) return;
  const counts = await collectionCounts(models, collectionId);
  const job = new Set(jobDocumentIds);
  const mine = counts.documents.filter((d) => job.has(d._id));
  const failed = mine.filter((d) => d.status === 'failed');
  const failures = failed.map((d) => `${d.filename}: ${d.error_message ?? 'failed'}`);
  const allFailed = mine.length > 0 && failed.length === mine.length;
  const status = error || allFailed ? 'failed' : 'ready';
  let message: string | null = null;
  if (error) message = `Ingest failed: ${error}`;
  else if (failed.length)
    message = `${failed.length} of ${mine.length} documents could not be processed: ${failures.join('; ')}`;
  const chunks = mine.reduce((sum, d) => sum + (d.chunk_count ?? 0), 0);
  const ended = mine.filter((d) => d.status !== 'pending').length;
  await models.RagCollection.updateOne(
    { _id: collectionId },
    {
      $set: {
        status,
        error_message: message,
        document_count: counts.document_count,
        chunk_count: counts.chunk_count,
        updated_at: new Date(),
        ...progressUpdate({
          status: status === 'ready' ? 'completed' : 'failed',
          current_step: status === 'ready' ? 'completed' : 'failed',
          progress: status === 'ready' || !mine.length ? 1 : ended / mine.length,
          processed_files: ended,
          total_files: mine.length,
          processed_chunks: chunks,
          total_chunks: chunks,
          error_message: message,
        }),
      },
    },
  );
}
