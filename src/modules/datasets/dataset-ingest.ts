import { pipeline, type Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { mongo } from 'mongoose';
import type { Models } from '../../db/models';
import type { BoundedParser } from '../../parsing/parse-pool';
import { gridfsAsyncBuffer, gridfsTee } from './gridfs-source';
import { DatasetFormatError, type DatasetRow, parserFor } from '../../parsing/datasets';
import { removeChunks, writeChunk } from '../../db/dataset-row-chunks';

export interface IngestOptions {
  fileName: string;
  format: string;
  maxBytes: number;
  rowsPerChunk: number;
  parser: BoundedParser;
}

export interface IngestedFile {
  fileId: mongo.ObjectId;
  /** Key of the stored rows: the GridFS file id, which exists before the dataset id does. */
  rowsKey: string;
  byteSize: number;
  rowCount: number;
  columns: string[];
}

/**
 * One pass over the upload: the bytes stream into GridFS and through the format's parser at once,
 * and parsed rows are written in chunks as they come, so memory holds one chunk, never the file.
 * On any failure (format error, size limit, client gone) every stored byte and row is removed.
 */
export async function ingestFile(models: Models, input: Readable, opts: IngestOptions): Promise<IngestedFile> {
  const bucket = models.datasetFiles;
  const fileId = new mongo.ObjectId();
  const rowsKey = fileId.toHexString();
  const upload = bucket.openUploadStreamWithId(fileId, opts.fileName, { metadata: { format: opts.format } });
  const tee = gridfsTee(upload, opts.maxBytes);
  // pipeline forwards a client abort (busboy destroys the part) to the parser as an error.
  pipeline(input, tee, () => undefined);
  const stored = async () => {
    if (!upload.writableFinished) await finished(upload);
    return gridfsAsyncBuffer(bucket, fileId, tee.bytes());
  };
  const columns = new Set<string>();
  let rowCount = 0;
  let chunk: DatasetRow[] = [];
  try {
    for await (const row of parserFor(opts.format)({
      stream: tee,
      stored,
      parser: opts.parser,
      fileName: opts.fileName,
    })) {
      for (const key of Object.keys(row)) columns.add(key);
      chunk.push(row);
      rowCount++;
      if (chunk.length === opts.rowsPerChunk) {
        await writeChunk(models, rowsKey, rowCount / opts.rowsPerChunk - 1, chunk);
        chunk = [];
      }
    }
    if (chunk.length > 0) await writeChunk(models, rowsKey, Math.floor(rowCount / opts.rowsPerChunk), chunk);
    if (tee.bytes() === 0) throw new DatasetFormatError('The file is empty');
    if (rowCount === 0) throw new DatasetFormatError('The file has no data rows');
    // Every parser reads to the end; should one stop early, the rest still has to reach GridFS.
    if (!tee.readableEnded) tee.resume();
    if (!upload.writableFinished) await finished(upload);
    return { fileId, rowsKey, byteSize: tee.bytes(), rowCount, columns: [...columns] };
  } catch (err) {
    tee.destroy();
    await discardUpload(models, fileId, rowsKey, upload);
    // A parser's complaint about a zero-byte file ("expected a value", "too short") says less.
    throw err instanceof DatasetFormatError && tee.bytes() === 0 ? new DatasetFormatError('The file is empty') : err;
  }
}

/** Removes what an upload stored so far: its GridFS file (whole or partial) and its row chunks. */
export async function discardUpload(
  models: Models,
  fileId: mongo.ObjectId,
  rowsKey: string,
  upload?: mongo.GridFSBucketWriteStream,
): Promise<void> {
  if (upload && !upload.writableFinished) {
    // Finish rather than abort(): abort refuses a stream that is already finishing and would let
    // its files document land after our delete. A finished file is then deleted like any other.
    if (!upload.writableEnded) upload.end();
    await finished(upload).catch(() => undefined);
  }
  // Deletes the chunks even when no files document was written (FileNotFound is expected then).
  await models.datasetFiles.delete(fileId).catch(() => undefined);
  await removeChunks(models, rowsKey);
}
