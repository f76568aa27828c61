import { Transform, type TransformCallback } from 'node:stream';

/** The blank lines that end a server-sent event (its line ends are CRLF, LF or CR). */
const EVENT_ENDS = [Buffer.from('\r\n\r\n'), Buffer.from('\n\n'), Buffer.from('\r\r')];
/** Bytes of the held tail looked at again with a new chunk: an event end may straddle two chunks. */
const OVERLAP = 3;

/**
 * Passes a `text/event-stream` answer on in whole events only, holding an unfinished event back.
 * The SDKs' SSE readers (OpenAI's, Anthropic's) copy and rescan their whole buffer on every chunk
 * until a blank line: fed an endless event (a decompressed bomb of one `data:` line) they spent
 * CPU-seconds per megabyte, held the decoder back, and the stream was cut by the idle timeout long
 * before the answer reached SPUR_OUTBOUND_MAX_RESPONSE_BYTES. Here each byte is scanned once and
 * held bytes are not counted against the reader, so the cap before this stage stops the bomb.
 */
export function eventFrames(): Transform {
  let held: Buffer[] = [];
  let heldBytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      const tail = heldBytes > 0 ? tailOf(held, OVERLAP) : Buffer.alloc(0);
      const end = lastEventEnd(Buffer.concat([tail, chunk]));
      if (end < 0) {
        held.push(chunk);
        heldBytes += chunk.length;
        return callback();
      }
      const cut = Math.max(0, end - tail.length); // where the last whole event ends within `chunk`
      const whole = Buffer.concat([...held, chunk.subarray(0, cut)]);
      held = cut < chunk.length ? [chunk.subarray(cut)] : [];
      heldBytes = chunk.length - cut;
      callback(null, whole);
    },
    flush(callback: TransformCallback) {
      // The stream ended inside an event: the reader gets it as it is, as without this stage.
      callback(null, heldBytes > 0 ? Buffer.concat(held) : undefined);
    },
  });
}

/** The last `n` bytes held (fewer when fewer are). */
function tailOf(chunks: Buffer[], n: number): Buffer {
  const out: Buffer[] = [];
  let need = n;
  for (let i = chunks.length - 1; i >= 0 && need > 0; i--) {
    const c = chunks[i] as Buffer;
    out.unshift(c.subarray(Math.max(0, c.length - need)));
    need -= c.length;
  }
  return Buffer.concat(out);
}

/** The index just past the last event end in `bytes`, or -1. */
function lastEventEnd(bytes: Buffer): number {
  let end = -1;
  for (const mark of EVENT_ENDS) {
    const at = bytes.lastIndexOf(mark);
    if (at >= 0) end = Math.max(end, at + mark.length);
  }
  return end;
}
