import { constants, createBrotliCompress, createGzip } from 'node:zlib';
import type { Transform } from 'node:stream';

export type BombEncoding = 'gzip' | 'br';

/**
 * `head` then `size` bytes of one letter, compressed as a server would send it with
 * `content-encoding: gzip` or `br`: a few hundred KiB (gzip) or bytes (brotli) on the wire, `size`
 * bytes once decoded. Compressed a MiB at a time, so the decoded bytes are never held at once.
 */
export async function compressionBomb(encoding: BombEncoding, head: string, size: number): Promise<Buffer> {
  const compressor: Transform =
    encoding === 'gzip'
      ? createGzip({ level: 9 })
      : createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
  const out: Buffer[] = [];
  compressor.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise<void>((resolve, reject) => compressor.once('end', resolve).once('error', reject));
  const block = Buffer.alloc(1024 * 1024, 'a');
  compressor.write(head);
  for (let left = size; left > 0; left -= block.length) {
    const piece = left >= block.length ? block : block.subarray(0, left);
    if (!compressor.write(piece)) await new Promise((resolve) => compressor.once('drain', resolve));
  }
  compressor.end();
  await done;
  return Buffer.concat(out);
}
