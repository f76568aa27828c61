import type { Client } from '@temporalio/client';
import type { Models } from '../../db/models';
import { createCollectionService } from './collections.service';
import { createDocumentService } from './documents.service';
import type { SecretReader } from '../../rag/embedder';
import { createIndexService } from './indices.service';
import { createRagJobs } from './rag-jobs';
import { createRetriever } from '../../rag/retrieval';
import type { VectorStore } from '../../rag/vector-store';
import type { OutboundFetch } from '../../outbound/outbound-fetch';
import type { BoundedParser } from '../../parsing/parse-pool';

export interface RagServiceDeps {
  models: Models;
  temporal: Client;
  taskQueue: string;
  workflowIdPrefix: string;
  /** Priority and fairness keys on its starts (SPUR_FAIR_SHARE, src/contracts/work-share.ts). */
  fairShare: boolean;
  vectors: VectorStore;
  secret: SecretReader;
  /** The api's outbound client (queries are embedded here). */
  fetch: OutboundFetch;
  /** Chunk previews are parsed on its threads, within the parse limits. */
  parser: BoundedParser;
}

/** Knowledge bases as the api serves them: collections, their documents, indices and retrieval. */
export function createRagService({
  models,
  temporal,
  taskQueue,
  workflowIdPrefix,
  fairShare,
  vectors,
  secret,
  fetch,
  parser,
}: RagServiceDeps) {
  const jobs = createRagJobs({ temporal, taskQueue, workflowIdPrefix, fairShare });
  const collections = createCollectionService({ models, jobs });
  return {
    collections,
    documents: createDocumentService({ models, collections, vectors, parser }),
    indices: createIndexService({ models, collections, jobs, vectors, secret }),
    retriever: createRetriever({ models, vectors, secret, fetch }),
    secret,
  };
}

export type RagService = ReturnType<typeof createRagService>;
