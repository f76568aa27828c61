import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type multer from '@koa/multer';
import { mongo } from 'mongoose';
import { type GridFsStaging, STAGING_PREFIX, deleteIfPresent } from '../db/gridfs';

type StorageEngine = NonNullable<multer.Options['storage']>;
/** multer passes and expects `null` for success; its type definitions only allow an Error. */
const NO_ERROR = null as unknown as Error;

/** An uploaded file as a route sees it: already in GridFS (staged), never in memory. */
export interface StagedFile {
  originalname: string;
  mimetype: string;
  size: number;
  gridfsId: mongo.ObjectId;
}

/** A file this server staged: its id is an ObjectId (GridFsUploadStorage's), never a value a client sent. */
export const isStagedFile = (v: unknown): v is StagedFile =>
  typeof v === 'object' && v !== null && (v as { gridfsId?: unknown }).gridfsId instanceof mongo.ObjectId;

/**
 * A multer storage engine that streams each file part into GridFS as it arrives, under a staging
 * name; the route gives a file its final name (commitStaged) once the request is valid. A request
 * holds at most a chunk of each file in memory, whatever the file size and count.
 */
export class GridFsUploadStorage implements StorageEngine {
  /** Every file this request started to store, finished or not. */
  readonly started: mongo.ObjectId[] = [];

  constructor(private readonly staging: GridFsStaging) {}

  _handleFile(_req: IncomingMessage, file: multer.File, done: (error?: unknown, info?: multer.File) => void): void {
    const upload = this.staging.bucket.openUploadStream(`${STAGING_PREFIX}${randomUUID()}`, {
      metadata: { content_type: file.mimetype },
    });
    this.started.push(upload.id);
    const stream = (file as multer.File & { stream: Readable }).stream;
    pipeline(stream, upload).then(
      // multer merges these fields into the file it reports (its type wants a whole File).
      () => done(NO_ERROR, { gridfsId: upload.id, size: upload.length } as Partial<StagedFile> as multer.File),
      (err: unknown) => done(err),
    );
  }

  _removeFile(_req: IncomingMessage, file: multer.File, done: (error: Error) => void): void {
    const id = (file as Partial<StagedFile>).gridfsId;
    if (!id) return done(NO_ERROR);
    deleteIfPresent(this.staging.bucket, id).then(
      () => done(NO_ERROR),
      (err: Error) => done(err),
    );
  }
}
