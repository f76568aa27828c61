import { proxyActivities } from '@temporalio/workflow';
import type { RagActivities } from '../activities';
import { type RagIndexInput, RagFailureType } from '../../src/contracts/rag-contract';
import { failureMessage } from '../../src/engine/graph-walker';

/**
 * One page of chunks (up to 200) is embedded and written by one activity: provider outages and
 * rate limits are retried with backoff, answers that retrying cannot change (bad key, wrong
 * dimensions) fail the index at once. Vectors are upserted by chunk id, so retries add nothing.
 */
const pages = proxyActivities<RagActivities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '30s',
  retry: {
    initialInterval: '2s',
    backoffCoefficient: 2,
    maximumInterval: '60s',
    maximumAttempts: 8,
    nonRetryableErrorTypes: [RagFailureType.Gone, RagFailureType.Embedding],
  },
});
const bookkeeping = proxyActivities<RagActivities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
});

/** Builds a vector index (`rag-index-<index>`): plan the pages, embed each, index them, record the result. */
export async function ragIndex(input: RagIndexInput): Promise<void> {
  let error: string | null = null;
  try {
    const plan = await bookkeeping.planRagIndex(input);
    let done = 0;
    for (const page of plan.pages) {
      done += await pages.embedRagChunkPage({ indexId: input.indexId, page, done, total: plan.totalChunks });
    }
    await pages.finalizeRagIndex(input);
  } catch (err) {
    error = failureMessage(err);
  }
  await bookkeeping.finishRagIndex({ indexId: input.indexId, error });
}
