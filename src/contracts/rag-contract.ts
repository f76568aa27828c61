// Types only: erased from the workflow bundle, so the workflow sandbox never loads the domain.
import type { ChunkPageRef, RagIndexPlan } from '../rag/index-build';

/**
 * Knowledge-base jobs: one Temporal workflow per collection ingest job and per index build. Inputs
 * are ids only; documents, chunks and vectors stay in MongoDB, GridFS and the vector store.
 */
export const RagWorkflowType = {
  ingest: 'ragIngest',
  index: 'ragIndex',
} as const;

export interface RagIngestInput {
  collectionId: string;
  /** The collection's job number: every ingest (create, add documents) is a job of its own. */
  job: number;
  /** The documents this job parses and chunks, in upload order. */
  documentIds: string[];
}

export interface RagIngestDocumentInput {
  collectionId: string;
  documentId: string;
  /** Counts before this document, so the activity can record the job's progress after it. */
  done: { files: number; chunks: number };
  totalFiles: number;
}

export interface RagIngestDocumentResult {
  chunks: number;
  failed: boolean;
}

export interface RagIndexInput {
  indexId: string;
}

/** The index plan is the knowledge-base domain's; the index workflow only carries it between activities. */
export type { ChunkPageRef, RagIndexPlan };

export interface RagEmbedPageInput {
  indexId: string;
  page: ChunkPageRef;
  /** Chunks embedded before this page, and the index's total, for its progress. */
  done: number;
  total: number;
}

export const ragIngestWorkflowId = (collectionId: string, job: number, prefix = '') =>
  `${prefix}rag-ingest-${collectionId}-${job}`;
export const ragIndexWorkflowId = (indexId: string, prefix = '') => `${prefix}rag-index-${indexId}`;

/** Failure types of knowledge-base activities that retrying cannot fix. */
export const RagFailureType = {
  Gone: 'RagRecordGone',
  Embedding: 'EmbeddingFailed',
} as const;
