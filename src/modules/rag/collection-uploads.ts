import { randomUUID } from 'node:crypto';
import { putBytes } from '../../db/gridfs';
import type { Models } from '../../db/models';
import type { UploadedFile } from '../../http/uploads';
import { safeFileName } from '../files/safe-file-name';

/**
 * Stores uploaded files of a collection (bytes in GridFS, a pending record each) before the ingest
 * job starts. Document ids are chosen here, once: the job derives every chunk id from them.
 */
export async function storeUploads(models: Models, collectionId: string, files: UploadedFile[], firstSeq: number): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, file] of files.entries()) {
    const id = randomUUID();
    const filename = safeFileName(file.originalname || `file-${i + 1}`);
    const fileId = await putBytes(models.ragFiles, filename, { collection_id: collectionId, document_id: id, content_type: file.mimetype || null }, file.buffer);
    const now = new Date();
    await models.RagDocument.create({
      _id: id, collection_id: collectionId, seq: firstSeq + i, filename, mime_type: file.mimetype || null, byte_size: file.buffer.length,
      file_id: fileId, status: 'pending', created_at: now, updated_at: now,
    });
    ids.push(id);
  }
  return ids;
}
