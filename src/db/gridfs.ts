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
