import { failIndexStart, insertIndex, removeIndex } from '../../rag/index-records';
import { toJsonText } from '../../db/json-text';
import { insertWithNewId } from '../../db/ids';
import type { Models, VectorIndexDoc } from '../../db/models';
import { BadRequestError, RequestValidationError } from '../../errors';
import { type Page, pageBounds } from '../../db/paging';
import type { CollectionService } from './collections.service';
import { type SecretReader, missingSettings } from '../../rag/embedder';
import { EMBEDDING_MODELS, findEmbeddingModel } from '../../rag/embedding-models';
import { startingProgress, toProgressResponse } from '../../rag/progress';
import type { RagJobs } from './rag-jobs';
import { toIndexResponse } from './rag-responses';
import type { IndexCreateRequest, IndexResponse } from './rag.schemas';
import type { ProgressResponse } from '../../rag/schemas';
import { indexNotFound } from '../../rag/retrieval';
import { resolveVectorDb, VECTOR_STORES } from '../../rag/vector-stores';
import type { VectorStore } from '../../rag/vector-store';

export interface IndexServiceDeps {
  models: Models;
  collections: CollectionService;
  jobs: RagJobs;
  vectors: VectorStore;
  secret: SecretReader;
}

function invalid(loc: string[], msg: string, input: unknown): RequestValidationError {
  return new RequestValidationError([
    { type: 'value_error', loc: ['body', ...loc], msg: `Value error, ${msg}`, input, ctx: { error: {} } },
  ]);
}

/** Vector indices: one build workflow each, vectors in the store under the index id. */
export function createIndexService({ models, collections, jobs, vectors, secret }: IndexServiceDeps) {
  const { VectorIndex } = models;

  async function load(id: string): Promise<VectorIndexDoc> {
    const doc = await VectorIndex.findById(id).lean<VectorIndexDoc>();
    if (!doc) throw indexNotFound();
    return doc;
  }

  /** Checks what can be checked before anything exists: model, store, settings, collection. */
  async function validate(request: IndexCreateRequest) {
    const model = findEmbeddingModel(request.embedding.model);
    if (!model)
      throw invalid(
        ['embedding', 'model'],
        `unknown embedding model; one of ${EMBEDDING_MODELS.map((m) => m.id).join(', ')}`,
        request.embedding.model,
      );
    const store = resolveVectorDb(request.embedding.vector_db);
    if (!store?.supported) {
      const supported = VECTOR_STORES.filter((s) => s.supported)
        .map((s) => s.id)
        .join(', ');
      throw invalid(
        ['embedding', 'vector_db'],
        `vector store '${request.embedding.vector_db}' is not supported by this server; use ${supported}`,
        request.embedding.vector_db,
      );
    }
    const collection = await collections.load(request.collection_id);
    if (collection.status === 'processing') throw collections.busy(collection._id);
    const missing = await missingSettings(secret, model);
    if (missing.length)
      throw new BadRequestError(`${missing.join(', ')} not set; add it in the environment settings to use ${model.id}`);
    return { model, store, collection };
  }

  return {
    async create(request: IndexCreateRequest): Promise<IndexResponse> {
      const { model, store, collection } = await validate(request);
      const now = new Date();
      const index = await insertWithNewId(
        models.conn,
        'vectorIndex',
        async (id) => (await VectorIndex.exists({ _id: id })) !== null,
        async (id, seq) => {
          const doc = {
            _id: id,
            seq,
            name: request.name,
            description: request.description ?? null,
            collection_id: collection._id,
            status: 'processing',
            document_count: collection.document_count ?? 0,
            chunk_count: 0,
            error_message: null,
            embedding_json: toJsonText({ ...request.embedding, vector_db: store.id }),
            dimensions: model.dimensions,
            progress: startingProgress(now, {
              files: collection.document_count ?? 0,
              chunks: collection.chunk_count ?? 0,
            }),
            created_at: now,
            updated_at: now,
          };
          await insertIndex(models, doc as VectorIndexDoc);
          return doc as VectorIndexDoc;
        },
      );
      try {
        await jobs.startIndex(index._id);
      } catch (err) {
        await failIndexStart(models, index._id, `Could not start indexing: ${(err as Error).message}`);
        throw err;
      }
      return toIndexResponse(await load(index._id));
    },
    async list(page: Page): Promise<IndexResponse[]> {
      const { skip, limit } = pageBounds(page);
      return (await VectorIndex.find().sort({ seq: 1 }).skip(skip).limit(limit).lean<VectorIndexDoc[]>()).map(
        toIndexResponse,
      );
    },
    get: async (id: string): Promise<IndexResponse> => toIndexResponse(await load(id)),
    progress: async (id: string): Promise<ProgressResponse> => toProgressResponse(id, (await load(id)).progress),
    /** The record first (retrieval 404s at once), then the build, then the vectors. */
    async remove(id: string): Promise<{ message: string }> {
      await load(id);
      await removeIndex(models, id);
      await jobs.stopIndex(id);
      await vectors.drop(id);
      return { message: 'Vector index deleted successfully' };
    },
  };
}

export type IndexService = ReturnType<typeof createIndexService>;
