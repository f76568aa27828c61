import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Models } from '../../src/db/models';
import { RagRecordGoneError, createDocumentIngest } from '../../src/rag/document-ingest';
import { EmbeddingError } from '../../src/rag/embedder';
import { createIndexBuild } from '../../src/rag/index-build';
import { finishIngest, recordIngestProgress } from '../../src/rag/collection-records';
import type { VectorStore } from '../../src/rag/vector-store';
import type { OutboundFetch } from '../../src/outbound/outbound-fetch';
import type { BoundedParser } from '../../src/parsing/parse-pool';
import {
  type RagEmbedPageInput,
  type RagIndexInput,
  type RagIngestDocumentInput,
  type RagIngestDocumentResult,
  type RagIndexPlan,
  RagFailureType,
} from '../../src/contracts/rag-contract';

export interface RagActivityDeps {
  models: Models;
  vectors: VectorStore;
  secret(name: string): Promise<string | undefined>;
  fetch: OutboundFetch;
  parser: BoundedParser;
}

const HEARTBEAT_EVERY_MS = 3000;

/**
 * Runs `work` with a heartbeat every few seconds (a provider call or a long parse may take longer
 * than the heartbeat timeout) and turns errors that retrying cannot fix into non-retryable failures.
 */
async function withHeartbeat<T>(work: (beat: () => void, signal: AbortSignal) => Promise<T>): Promise<T> {
  const context = Context.current();
  const beat = () => context.heartbeat();
  const timer = setInterval(beat, HEARTBEAT_EVERY_MS);
  try {
    return await work(beat, context.cancellationSignal);
  } catch (err) {
    if (err instanceof RagRecordGoneError) throw ApplicationFailure.nonRetryable(err.message, RagFailureType.Gone);
    if (err instanceof EmbeddingError && !err.retryable)
      throw ApplicationFailure.nonRetryable(err.message, RagFailureType.Embedding);
    // The provider said when to come back: the next attempt waits that long, not the usual backoff.
    if (err instanceof EmbeddingError && err.retryAfterMs)
      throw ApplicationFailure.create({
        message: err.message,
        type: 'EmbeddingUnavailable',
        nextRetryDelay: err.retryAfterMs,
      });
    throw err;
  } finally {
    clearInterval(timer);
  }
}

/** Activities of the knowledge-base workflows (ragIngest, ragIndex); every write keyed by id. */
export function createRagActivities(deps: RagActivityDeps) {
  const build = createIndexBuild(deps);
  return {
    ingestRagDocument: (input: RagIngestDocumentInput): Promise<RagIngestDocumentResult> =>
      withHeartbeat(async (beat) => {
        const outcome = await createDocumentIngest(
          deps.models,
          deps.parser,
          beat,
        )(input.collectionId, input.documentId);
        await recordIngestProgress(
          deps.models,
          input.collectionId,
          { done: input.done.files + 1, total: input.totalFiles },
          input.done.chunks + outcome.chunks,
        );
        return outcome;
      }),
    finishRagIngest: (input: { collectionId: string; documentIds: string[]; error: string | null }): Promise<void> =>
      finishIngest(deps.models, input.collectionId, input.documentIds, input.error),
    planRagIndex: (input: RagIndexInput): Promise<RagIndexPlan> => withHeartbeat(() => build.plan(input.indexId)),
    embedRagChunkPage: (input: RagEmbedPageInput): Promise<number> =>
      withHeartbeat((beat, signal) =>
        build.embedPage(input.indexId, input.page, input.done, input.total, beat, signal),
      ),
    finalizeRagIndex: (input: RagIndexInput): Promise<void> => withHeartbeat(() => build.finalize(input.indexId)),
    finishRagIndex: (input: { indexId: string; error: string | null }): Promise<void> =>
      build.finish(input.indexId, input.error),
  };
}

export type RagActivities = ReturnType<typeof createRagActivities>;
