import { proxyActivities } from '@temporalio/workflow';
import type { RagActivities } from '../activities';
import { type RagIngestInput, RagFailureType } from '../../src/contracts/rag-contract';
import { failureMessage } from '../../src/engine/graph-walker';

/**
 * A document is parsed and chunked by one activity. It heartbeats while it works, so a killed
 * worker's document is taken up by another worker within seconds; its writes are keyed by the
 * document's id, so the retry rewrites the same chunks instead of adding more.
 */
const documents = proxyActivities<RagActivities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '20s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    maximumAttempts: 10,
    nonRetryableErrorTypes: [RagFailureType.Gone],
  },
});
/** The end of a job must be recorded whatever happened before: retried until MongoDB answers. */
const bookkeeping = proxyActivities<RagActivities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

/**
 * An ingest job of a collection (`rag-ingest-<collection>-<job>`): its new documents, one after
 * the other, then the collection's counts and status. A document that cannot be parsed fails on
 * its own; the job fails only when something beyond one document broke.
 */
export async function ragIngest(input: RagIngestInput): Promise<void> {
  const done = { files: 0, chunks: 0 };
  let error: string | null = null;
  try {
    for (const documentId of input.documentIds) {
      const result = await documents.ingestRagDocument({
        collectionId: input.collectionId,
        documentId,
        done: { ...done },
        totalFiles: input.documentIds.length,
      });
      done.files += 1;
      done.chunks += result.chunks;
    }
  } catch (err) {
    error = failureMessage(err);
  }
  await bookkeeping.finishRagIngest({ collectionId: input.collectionId, documentIds: input.documentIds, error });
}
