import { randomUUID } from 'node:crypto';
import { type GridFsStaging, commitStaged } from '../../db/gridfs';
import type { Models } from '../../db/models';
import type { StagedFile } from '../../http/gridfs-upload-storage';
import { insertPendingDocument } from '../../rag/document-records';
import { safeFileName } from '../files/safe-file-name';

/**
 * Takes the uploaded files of a collection (already streamed into `rag_files` as staged files: no
 * byte is copied) and writes a pending record for each before the ingest job starts. Document ids
 * are chosen here, once: the job derives every chunk id from them.
 */
export async function storeUploads(
  models: Models,
  staging: GridFsStaging,
  collectionId: string,
  files: StagedFile[],
  firstSeq: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, file] of files.entries()) {
    const id = randomUUID();
    const filename = safeFileName(file.originalname || `file-${i + 1}`);
    await commitStaged(staging, file.gridfsId, filename, {
      collection_id: collectionId,
      document_id: id,
      content_type: file.mimetype || null,
    });
    const now = new Date();
    await insertPendingDocument(models, {
      _id: id,
      collection_id: collectionId,
      seq: firstSeq + i,
      filename,
      mime_type: file.mimetype || null,
      byte_size: file.size,
      file_id: file.gridfsId,
      created_at: now,
      updated_at: now,
    });
    ids.push(id);
  }
  return ids;
}
