import type { mongo } from 'mongoose';

/** Stores bytes as one GridFS file and resolves with its id once every chunk is written. */
export function putBytes(bucket: mongo.GridFSBucket, filename: string, metadata: Record<string, unknown>, data: Buffer): Promise<mongo.ObjectId> {
  const upload = bucket.openUploadStream(filename, { metadata });
  return new Promise((resolve, reject) => {
    upload.once('finish', () => resolve(upload.id));
    upload.once('error', reject);
    upload.end(data);
  });
}

/**
 * Deletes a GridFS file that may already be gone: a concurrent request (two deletes of one
 * workflow, two uploads replacing one name) removed it between our find and this delete. Any
 * other failure still throws.
 */
export async function deleteIfPresent(bucket: mongo.GridFSBucket, id: mongo.ObjectId): Promise<void> {
  try {
    await bucket.delete(id);
  } catch (err) {
    if (!(err instanceof Error && err.message.startsWith('File not found for id'))) throw err;
  }
}
