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

/** One page of a document's chunks (up to CHUNKS_PER_PAGE), embedded by one activity. */
export interface ChunkPageRef {
  documentId: string;
  page: number;
  chunks: number;
}

/** What an index build embeds, page by page: the index workflow carries it between activities. */
export interface RagIndexPlan {
  pages: ChunkPageRef[];
  totalChunks: number;
}

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
