import type { VectorHit } from './vector-store';

/**
 * Hybrid ranking: each candidate's cosine similarity (0 when only the keyword search found it)
 * and its BM25 score divided by the best BM25 score of the query (0 when only the vector search
 * found it), averaged with the given weights. The result stays on the cosine scale: 1 is a chunk
 * that is both the nearest possible vector and the best keyword match.
 */
export function hybridRank(
  byVector: VectorHit[],
  byKeyword: VectorHit[],
  weights: { semantic: number; keyword: number },
  limit: number,
): VectorHit[] {
  const total = weights.semantic + weights.keyword || 1;
  const best = Math.max(0, ...byKeyword.map((h) => h.score));
  const merged = new Map<string, { hit: VectorHit; cosine: number; keyword: number }>();
  for (const hit of byVector) merged.set(hit.chunk_id, { hit, cosine: hit.score, keyword: 0 });
  for (const hit of byKeyword) {
    const entry = merged.get(hit.chunk_id) ?? { hit, cosine: 0, keyword: 0 };
    entry.keyword = best > 0 ? hit.score / best : 0;
    merged.set(hit.chunk_id, entry);
  }
  return [...merged.values()]
    .map(({ hit, cosine, keyword }) => ({
      ...hit,
      score: (weights.semantic * cosine + weights.keyword * keyword) / total,
    }))
    .sort((a, b) => b.score - a.score)
    .slice(0, limit);
}
