import type { Models } from '../../src/db/models';
import { createBatchActivities } from './batch.activities';
import { createNodeActivities } from './execute-node.activity';
import { createProjectionActivities } from './projection.activities';
import { createRagActivities } from './rag.activities';
import type { VectorStore } from '../../src/modules/rag/vector-store';
import type { RagRetriever } from '../../src/nodes/types';

export interface ActivityDeps {
  models: Models;
  secret(name: string): Promise<string | undefined>;
  /** Knowledge bases: the vector store and retrieval for RetrieverNode. */
  vectors: VectorStore;
  retriever?: RagRetriever;
}

/** Activities get their dependencies by closure (plain factory, no container). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createProjectionActivities(deps.models),
    ...createNodeActivities(deps),
    ...createBatchActivities(deps),
    ...createRagActivities(deps),
  };
}

export type ProjectionActivities = ReturnType<typeof createProjectionActivities>;
export type BatchActivities = ReturnType<typeof createBatchActivities>;
export type { RagActivities } from './rag.activities';
