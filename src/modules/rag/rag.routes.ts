import { z } from 'zod';
import { multipartUpload, type UploadLimits } from '../../http/uploads';
import { WHOLE_LIST_PAGE_MAX, WholeListQuery, wholeListQuery } from '../../http/pagination';
import { defineRoute, type MountableRoute } from '../../http/route';
import { EmbeddingError } from '../../rag/embedder';
import { embeddingModelListing, vectorStoreListing } from './rag-env';
import type { RagService } from './rag.service';
import {
  AddDocumentsForm,
  CollectionCreateForm,
  CollectionIdParams,
  CollectionResponse,
  DocumentIdParams,
  DocumentWithChunks,
  EmbeddingModelEntry,
  IndexCreateRequest,
  IndexIdParams,
  IndexResponse,
  Message,
  PreviewChunkForm,
  PreviewChunkResponse,
  VectorStoreEntry,
} from './rag.schemas';
import { ProgressResponse, RetrievalRequest, RetrievalResponse } from '../../rag/schemas';
import { IndexNotReadyError } from '../../rag/retrieval';

const tags = ['rag'];
/** Each document comes with its whole text and every chunk: fewer of them per answer than of other records. */
const DOCUMENTS_PAGE_MAX = 100;
const DocumentsQuery = wholeListQuery(DOCUMENTS_PAGE_MAX);

/** The 15 `/rag/` routes of PySpur's knowledge-base api, and env-mgmt's two listings for them. */
export function ragRoutes(rag: RagService, uploadLimits: UploadLimits): MountableRoute[] {
  const { collections, documents, indices, retriever } = rag;
  return [
    defineRoute({
      method: 'get',
      path: '/env-mgmt/embedding-models/',
      summary: 'Embedding models, each saying whether its settings are set',
      tags: ['env-mgmt'],
      response: z.record(z.string(), EmbeddingModelEntry),
      handler: () => embeddingModelListing(rag.secret),
    }),
    defineRoute({
      method: 'get',
      path: '/env-mgmt/vector-stores/',
      summary: 'Vector stores, each saying whether this server can use it',
      tags: ['env-mgmt'],
      response: z.record(z.string(), VectorStoreEntry),
      handler: () => vectorStoreListing(),
    }),
    defineRoute({
      method: 'post',
      path: '/rag/collections/preview_chunk/',
      permission: 'build',
      summary: 'How a file would be chunked (first, middle and last chunk)',
      tags,
      bodyType: 'multipart/form-data',
      middleware: [multipartUpload('file', { ...uploadLimits, maxFiles: 1 }, collections.staging)],
      body: PreviewChunkForm,
      response: PreviewChunkResponse,
      errors: [400, 413],
      handler: ({ body }) => documents.preview(body.file[0] as (typeof body.file)[number], body.chunking_config),
    }),
    defineRoute({
      method: 'post',
      path: '/rag/collections/',
      permission: 'build',
      summary: 'Create a document collection; its files are parsed and chunked by a workflow',
      tags,
      bodyType: 'multipart/form-data',
      middleware: [multipartUpload('files', uploadLimits, collections.staging)],
      body: CollectionCreateForm,
      response: CollectionResponse,
      errors: [409, 413, 503],
      handler: ({ body }) => collections.create(body.metadata, body.files ?? []),
    }),
    defineRoute({
      method: 'get',
      path: '/rag/collections/',
      summary: `Document collections, ${WHOLE_LIST_PAGE_MAX} per page unless page_size says fewer`,
      tags,
      query: WholeListQuery,
      response: z.array(CollectionResponse),
      handler: ({ query }) => collections.list(query),
    }),
    defineRoute({
      method: 'get',
      path: '/rag/collections/{collection_id}/',
      summary: 'Get a document collection',
      tags,
      params: CollectionIdParams,
      response: CollectionResponse,
      errors: [404],
      handler: ({ params }) => collections.get(params.collection_id),
    }),
    defineRoute({
      method: 'delete',
      path: '/rag/collections/{collection_id}/',
      permission: 'build',
      summary: 'Delete a collection with its documents and chunks (409 while an index uses it)',
      tags,
      params: CollectionIdParams,
      response: Message,
      errors: [404, 409],
      handler: ({ params }) => collections.remove(params.collection_id),
    }),
    defineRoute({
      method: 'get',
      path: '/rag/collections/{collection_id}/progress/',
      summary: "Progress of the collection's latest ingest job",
      tags,
      params: CollectionIdParams,
      response: ProgressResponse,
      errors: [404],
      handler: ({ params }) => collections.progress(params.collection_id),
    }),
    defineRoute({
      method: 'get',
      path: '/rag/collections/{collection_id}/documents/',
      summary: `Documents of a collection with their text and chunks, ${DOCUMENTS_PAGE_MAX} per page unless page_size says fewer`,
      tags,
      params: CollectionIdParams,
      query: DocumentsQuery,
      response: z.array(DocumentWithChunks),
      errors: [404],
      handler: ({ params, query }) => documents.list(params.collection_id, query),
    }),
    defineRoute({
      method: 'post',
      path: '/rag/collections/{collection_id}/documents/',
      permission: 'build',
      summary: 'Add documents to a collection (a new ingest job)',
      tags,
      params: CollectionIdParams,
      bodyType: 'multipart/form-data',
      middleware: [multipartUpload('files', uploadLimits, collections.staging)],
      body: AddDocumentsForm,
      response: CollectionResponse,
      errors: [404, 409, 413, 503],
      handler: ({ params, body }) => collections.addDocuments(params.collection_id, body.files),
    }),
    defineRoute({
      method: 'delete',
      path: '/rag/collections/{collection_id}/documents/{document_id}/',
      permission: 'build',
      summary: 'Delete a document, its chunks and its vectors',
      tags,
      params: DocumentIdParams,
      response: Message,
      errors: [404, 409],
      handler: ({ params }) => documents.remove(params.collection_id, params.document_id),
    }),
    defineRoute({
      method: 'post',
      path: '/rag/indices/',
      permission: 'build',
      summary: 'Create a vector index over a collection; built by a workflow',
      tags,
      body: IndexCreateRequest,
      response: IndexResponse,
      errors: [400, 404, 409, 503],
      handler: ({ body }) => indices.create(body),
    }),
    defineRoute({
      method: 'get',
      path: '/rag/indices/',
      summary: `Vector indices, ${WHOLE_LIST_PAGE_MAX} per page unless page_size says fewer`,
      tags,
      query: WholeListQuery,
      response: z.array(IndexResponse),
      handler: ({ query }) => indices.list(query),
    }),
    defineRoute({
      method: 'get',
      path: '/rag/indices/{index_id}/',
      summary: 'Get a vector index',
      tags,
      params: IndexIdParams,
      response: IndexResponse,
      errors: [404],
      handler: ({ params }) => indices.get(params.index_id),
    }),
    defineRoute({
      method: 'delete',
      path: '/rag/indices/{index_id}/',
      permission: 'build',
      summary: 'Delete a vector index and its vectors',
      tags,
      params: IndexIdParams,
      response: Message,
      errors: [404],
      handler: ({ params }) => indices.remove(params.index_id),
    }),
    defineRoute({
      method: 'get',
      path: '/rag/indices/{index_id}/progress/',
      summary: 'Progress of the index build',
      tags,
      params: IndexIdParams,
      response: ProgressResponse,
      errors: [404],
      handler: ({ params }) => indices.progress(params.index_id),
    }),
    defineRoute({
      method: 'post',
      path: '/rag/indices/{index_id}/retrieve/',
      permission: 'run',
      summary: 'Nearest chunks by cosine similarity (higher is better)',
      tags,
      params: IndexIdParams,
      body: RetrievalRequest,
      response: RetrievalResponse,
      errors: [400, 404, 409, 503],
      handler: async ({ params, body }, ctx) => {
        try {
          return await retriever.retrieve(params.index_id, body);
        } catch (err) {
          // 409 with where the build stands; a provider that is down is a 503 the client may retry.
          if (err instanceof IndexNotReadyError) {
            ctx.status = 409;
            return { detail: err.message, progress: err.progress };
          }
          if (err instanceof EmbeddingError) {
            ctx.status = err.retryable ? 503 : 400;
            if (err.retryable) ctx.set('Retry-After', '5');
            return { detail: err.message };
          }
          throw err;
        }
      },
    }),
  ];
}
