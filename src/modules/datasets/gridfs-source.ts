import { Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { AsyncBuffer } from 'hyparquet';
import type { mongo } from 'mongoose';
import { PayloadTooLargeError } from '../../errors';

type Bucket = mongo.GridFSBucket;
type UploadStream = mongo.GridFSBucketWriteStream;

/**
 * A pass-through that counts the upload's bytes and copies them into GridFS on their way to the
 * parser, honouring GridFS's backpressure. Past `maxBytes` it fails with a 413 at once, so an
 * oversized upload is never held anywhere in full. It ends only after GridFS has the last byte.
 */
export function gridfsTee(upload: UploadStream, maxBytes: number): Transform & { bytes(): number } {
  let bytes = 0;
  const tee = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > maxBytes)
        return done(new PayloadTooLargeError(`Dataset file too large: the limit is ${maxBytes} bytes`));
      if (upload.write(chunk)) return done(null, chunk);
      upload.once('drain', () => done(null, chunk));
    },
    flush(done) {
      upload.end();
      finished(upload).then(() => done(), done);
    },
  });
  upload.on('error', (err) => tee.destroy(err));
  return Object.assign(tee, { bytes: () => bytes });
}

/**
 * Random access to a stored GridFS file through ranged reads, for readers that need it (Parquet).
 * Nothing is cached: the reader asks for the footer once and for each column chunk once.
 */
export function gridfsAsyncBuffer(bucket: Bucket, fileId: mongo.ObjectId, byteLength: number): AsyncBuffer {
  return {
    byteLength,
    async slice(start: number, end = byteLength): Promise<ArrayBuffer> {
      if (end <= start) return new ArrayBuffer(0);
      const parts: Buffer[] = [];
      for await (const part of bucket.openDownloadStream(fileId, { start, end })) parts.push(part as Buffer);
      const buf = Buffer.concat(parts);
      return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
    },
  };
}
