/** One chunk's vector and what a retrieval shows of it. */
export interface VectorRow {
  chunk_id: string;
  document_id: string;
  document_title: string | null;
  chunk_number: number;
  page_number: number | null;
  text: string;
  vector: number[];
}

export type VectorHit = Omit<VectorRow, 'vector'> & {
  /** Vector search: cosine similarity (1 is identical, higher is closer). Keyword search: BM25 (higher is better). */
  score: number;
};

/**
 * Where vectors live, one space per index: an index only ever sees its own vectors and dropping
 * it removes them. Writes are idempotent (upsert by chunk id), so a retried job adds nothing.
 */
export interface VectorStore {
  upsert(indexId: string, dimensions: number, rows: VectorRow[]): Promise<void>;
  search(indexId: string, vector: number[], limit: number, options?: { exact?: boolean }): Promise<VectorHit[]>;
  /** Full-text (BM25) search over the chunks' text, for hybrid retrieval. */
  keywordSearch(indexId: string, query: string, limit: number): Promise<VectorHit[]>;
  /**
   * Once an index is complete: a full-text index for keyword search and, for large indices, an
   * approximate-nearest-neighbour index (searches no longer read every vector).
   */
  finalize(indexId: string): Promise<void>;
  count(indexId: string): Promise<number>;
  deleteDocument(indexId: string, documentId: string): Promise<void>;
  drop(indexId: string): Promise<void>;
}
