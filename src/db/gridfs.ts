import { mongo } from 'mongoose';

const GridFSBucketCtor = mongo.GridFSBucket;

/** Stores bytes as one GridFS file and resolves with its id once every chunk is written. */
export function putBytes(
  bucket: mongo.GridFSBucket,
  filename: string,
  metadata: Record<string, unknown>,
  data: Buffer,
): Promise<mongo.ObjectId> {
  const upload = bucket.openUploadStream(filename, { metadata });
  return new Promise((resolve, reject) => {
    upload.once('finish', () => resolve(upload.id));
    upload.once('error', reject);
    upload.end(data);
  });
}

/** The whole content of one GridFS file (for readers that need it at once, as a document parser does). */
export async function readBytes(bucket: mongo.GridFSBucket, id: mongo.ObjectId): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of bucket.openDownloadStream(id)) parts.push(part as Buffer);
  return Buffer.concat(parts);
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

/** Where a multipart upload streams its files before the route has validated the request. */
export interface GridFsStaging {
  bucket: mongo.GridFSBucket;
  /** The bucket's `<name>.files` and `<name>.chunks` collections. */
  files: mongo.Collection;
  chunks: mongo.Collection;
}

/** Files whose name starts so are staged: no route has taken them yet. */
export const STAGING_PREFIX = 'upload-staging/';

export function gridFsStaging(db: mongo.Db, bucketName: string): GridFsStaging {
  return {
    bucket: new GridFSBucketCtor(db, { bucketName }),
    files: db.collection(`${bucketName}.files`),
    chunks: db.collection(`${bucketName}.chunks`),
  };
}

/**
 * Takes a staged file: gives it its final name and metadata in one write (no byte is copied). Only
 * a file still under its staging name is taken, so no committed file (GridFS files name no
 * workspace) can be renamed away from its owner.
 */
export async function commitStaged(
  staging: GridFsStaging,
  id: mongo.ObjectId,
  filename: string,
  metadata: Record<string, unknown>,
): Promise<void> {
  const staged = { _id: { $eq: id }, filename: { $regex: `^${STAGING_PREFIX}` } };
  const { matchedCount } = await staging.files.updateOne(staged, { $set: { filename, metadata } });
  if (matchedCount !== 1) throw new Error(`upload ${String(id)} is not a staged file`);
}

/**
 * Deletes the given files that are still staged (the request failed, or did not take them),
 * including the chunks of one cut off mid-stream (GridFS writes a file's document last).
 */
export async function discardStaged(staging: GridFsStaging, ids: mongo.ObjectId[]): Promise<void> {
  if (ids.length === 0) return;
  const docs = await staging.files.find({ _id: { $in: ids } }, { projection: { filename: 1 } }).toArray();
  for (const doc of docs)
    if (String(doc.filename).startsWith(STAGING_PREFIX))
      await deleteIfPresent(staging.bucket, doc._id as mongo.ObjectId);
  const unfinished = ids.filter((id) => !docs.some((d) => id.equals(d._id as mongo.ObjectId)));
  if (unfinished.length > 0) await staging.chunks.deleteMany({ files_id: { $in: unfinished } });
}
