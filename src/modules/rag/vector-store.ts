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
  /** Cosine similarity of the query and the chunk: 1 is identical, higher is closer. */
  score: number;
};

/**
 * Where vectors live, one space per index: an index only ever sees its own vectors and dropping
 * it removes them. Writes are idempotent (upsert by chunk id), so a retried job adds nothing.
 */
export interface VectorStore {
  upsert(indexId: string, dimensions: number, rows: VectorRow[]): Promise<void>;
  search(indexId: string, vector: number[], limit: number): Promise<VectorHit[]>;
  count(indexId: string): Promise<number>;
  deleteDocument(indexId: string, documentId: string): Promise<void>;
  drop(indexId: string): Promise<void>;
}
