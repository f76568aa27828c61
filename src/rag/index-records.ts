import type { Models } from '../db/models';
import type { VectorIndexDoc } from '../db/models/vector-index.model';
import { progressUpdate } from './progress';

// The one module that writes vector index records (`vector_indices`): the api creates and removes
// them; the index build in the worker records its plan, its progress and its end.

export async function insertIndex(models: Models, doc: VectorIndexDoc): Promise<void> {
  await models.VectorIndex.create(doc);
}

/** A build that could not start: the index fails with the reason, never stays processing. */
export async function failIndexStart(models: Models, indexId: string, message: string): Promise<void> {
  await models.VectorIndex.updateOne(
    { _id: indexId },
    {
      $set: {
        status: 'failed',
        error_message: message,
        'progress.status': 'failed',
        'progress.error_message': message,
      },
    },
  );
}

/** The build's plan: how many documents and chunks it embeds. */
export async function recordIndexPlan(
  models: Models,
  indexId: string,
  documents: number,
  totalChunks: number,
): Promise<void> {
  await models.VectorIndex.updateOne(
    { _id: indexId },
    {
      $set: {
        document_count: documents,
        ...progressUpdate({
          status: 'processing',
          current_step: 'embedding',
          total_files: documents,
          processed_files: 0,
          total_chunks: totalChunks,
          processed_chunks: 0,
        }),
      },
    },
  );
}

export async function recordIndexProgress(
  models: Models,
  indexId: string,
  processedChunks: number,
  totalChunks: number,
): Promise<void> {
  await models.VectorIndex.updateOne(
    { _id: indexId },
    {
      $set: progressUpdate({
        processed_chunks: processedChunks,
        progress: totalChunks ? processedChunks / totalChunks : 1,
      }),
    },
  );
}

export async function recordIndexStep(models: Models, indexId: string, step: string): Promise<void> {
  await models.VectorIndex.updateOne({ _id: indexId }, { $set: progressUpdate({ current_step: step }) });
}

/** Ready with the store's own count of vectors, or failed with the reason. */
export async function finishIndexRecord(
  models: Models,
  index: VectorIndexDoc,
  count: number,
  error: string | null,
): Promise<void> {
  const ok = error === null;
  const message = ok ? null : `Indexing failed: ${error}`;
  await models.VectorIndex.updateOne(
    { _id: index._id },
    {
      $set: {
        status: ok ? 'ready' : 'failed',
        chunk_count: count,
        error_message: message,
        updated_at: new Date(),
        ...progressUpdate({
          status: ok ? 'completed' : 'failed',
          current_step: ok ? 'completed' : 'failed',
          processed_files: ok ? index.document_count : index.progress.processed_files,
          error_message: message,
          ...(ok ? { progress: 1, processed_chunks: count } : {}),
        }),
      },
    },
  );
}

/** The index's vector count after a document of its collection was removed. */
export async function setIndexChunkCount(models: Models, indexId: string, count: number): Promise<void> {
  await models.VectorIndex.updateOne({ _id: indexId }, { $set: { chunk_count: count, updated_at: new Date() } });
}

export async function removeIndex(models: Models, indexId: string): Promise<void> {
  await models.VectorIndex.deleteOne({ _id: indexId });
}
