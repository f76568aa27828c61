import { gridFsStaging } from '../../db/gridfs';
import { toJsonText } from '../../db/json-text';
import { insertWithNewId, isDuplicateKeyError } from '../../db/ids';
import type { Models, RagCollectionDoc } from '../../db/models';
import { ConflictError, NotFoundError } from '../../errors';
import { type Page, pageBounds } from '../../db/paging';
import type { StagedFile } from '../../http/gridfs-upload-storage';
import { storeUploads } from './collection-uploads';
import { createDocumentStore } from '../../rag/document-store';
import {
  claimCollectionJob,
  collectionCounts,
  failCollectionJob,
  insertCollection,
  recountCollection,
  removeCollection,
} from '../../rag/collection-records';
import { removeDocumentRecord } from '../../rag/document-records';
import { startingProgress, toProgressResponse } from '../../rag/progress';
import type { RagJobs } from './rag-jobs';
import { toCollectionResponse } from './rag-responses';
import type { CollectionMetadata, CollectionResponse } from './rag.schemas';
import type { ProgressResponse } from '../../rag/schemas';

export const collectionNotFound = () => new NotFoundError('Document collection not found', 'COLLECTION_NOT_FOUND');
const nameTaken = (name: string) =>
  new ConflictError(`A document collection named '${name}' already exists`, 'COLLECTION_NAME_TAKEN');
const busy = (id: string) =>
  new ConflictError(
    `Document collection ${id} is still processing documents; wait until its progress is completed`,
    'COLLECTION_BUSY',
  );

export interface CollectionServiceDeps {
  models: Models;
  jobs: RagJobs;
}

/**
 * Document collections. Uploads are stored, then one ingest workflow per job parses and chunks
 * them; while a job runs the collection is `processing` and refuses changes (409), so each
 * collection has one writer at a time. Deleting a collection an index still uses is refused (409).
 */
export function createCollectionService({ models, jobs }: CollectionServiceDeps) {
  const { RagCollection, RagDocument, VectorIndex } = models;
  const documents = createDocumentStore(models);
  const staging = gridFsStaging(models.conn.db as NonNullable<Models['conn']['db']>, 'rag_files');

  async function load(id: string): Promise<RagCollectionDoc> {
    const doc = await RagCollection.findById(id).lean<RagCollectionDoc>();
    if (!doc) throw collectionNotFound();
    return doc;
  }

  /** Stores the files and starts the job; a failure on the way fails the collection, never leaves it processing. */
  async function startJob(collection: RagCollectionDoc, files: StagedFile[]): Promise<void> {
    const job = (collection.job ?? 0) + 1;
    if (!(await claimCollectionJob(models, collection._id, job, files.length))) throw busy(collection._id);
    try {
      const first = await RagDocument.countDocuments({ collection_id: collection._id });
      const documentIds = await storeUploads(models, staging, collection._id, files, first);
      await recountCollection(models, collection._id);
      await jobs.startIngest({ collectionId: collection._id, job, documentIds });
    } catch (err) {
      await failCollectionJob(models, collection._id, `Could not start processing: ${(err as Error).message}`);
      throw err;
    }
  }

  return {
    /** Uploads stream here first (as staged files); a job takes them (storeUploads). */
    staging,
    load,
    async create(meta: CollectionMetadata, files: StagedFile[]): Promise<CollectionResponse> {
      if (await RagCollection.exists({ name: meta.name })) throw nameTaken(meta.name);
      const now = new Date();
      let created: RagCollectionDoc;
      try {
        created = await insertWithNewId(
          models.conn,
          'ragCollection',
          async (id) => (await RagCollection.exists({ _id: id })) !== null,
          async (id, seq) => {
            const doc = {
              _id: id,
              seq,
              name: meta.name,
              description: meta.description ?? null,
              status: 'ready',
              text_processing_json: toJsonText(meta.text_processing),
              document_count: 0,
              chunk_count: 0,
              error_message: null,
              job: 0,
              created_at: now,
              updated_at: now,
              progress: {
                ...startingProgress(now, { files: 0, chunks: 0 }, 'completed'),
                status: 'completed',
                progress: 1,
              },
            };
            await insertCollection(models, doc as RagCollectionDoc);
            return doc as RagCollectionDoc;
          },
        );
      } catch (err) {
        if (isDuplicateKeyError(err) && (await RagCollection.exists({ name: meta.name }))) throw nameTaken(meta.name);
        throw err;
      }
      if (files.length) await startJob(created, files);
      return toCollectionResponse(await load(created._id));
    },
    async list(page: Page): Promise<CollectionResponse[]> {
      const { skip, limit } = pageBounds(page);
      return (await RagCollection.find().sort({ seq: 1 }).skip(skip).limit(limit).lean<RagCollectionDoc[]>()).map(
        toCollectionResponse,
      );
    },
    get: async (id: string): Promise<CollectionResponse> => toCollectionResponse(await load(id)),
    progress: async (id: string): Promise<ProgressResponse> => toProgressResponse(id, (await load(id)).progress),
    async addDocuments(id: string, files: StagedFile[]): Promise<CollectionResponse> {
      const collection = await load(id);
      if (collection.status === 'processing') throw busy(id);
      await startJob(collection, files);
      return toCollectionResponse(await load(id));
    },
    async remove(id: string): Promise<{ message: string }> {
      const collection = await load(id);
      if (collection.status === 'processing') throw busy(id);
      const users = await VectorIndex.find({ collection_id: id }, { _id: 1 }).lean<{ _id: string }[]>();
      if (users.length) {
        throw new ConflictError(
          `Document collection ${id} is used by vector index ${users.map((u) => u._id).join(', ')}; delete the index first`,
          'COLLECTION_IN_USE',
        );
      }
      await removeCollection(models, id);
      for (const doc of (await collectionCounts(models, id)).documents) {
        await documents.remove(doc);
        await removeDocumentRecord(models, doc._id);
      }
      return { message: 'Document collection deleted successfully' };
    },
    busy,
  };
}

export type CollectionService = ReturnType<typeof createCollectionService>;
