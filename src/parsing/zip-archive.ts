import { inflateRawSync } from 'node:zlib';
import { ByteBudget, ParseLimitError, bytesLimit, formatBytes } from './limits';

/**
 * A ZIP archive (DOCX is one) read with its sizes checked before anything is inflated: the sum
 * of the uncompressed sizes its headers declare (the larger of the central directory's and the
 * local header's, per entry) must be within the limit, and no entry may inflate past what it
 * declared. So a few megabytes that inflate to gigabytes are refused whether the headers tell
 * the truth or lie. Entries are inflated one at a time, when first read.
 */

interface Entry {
  name: string;
  method: number;
  compressedSize: number;
  declaredSize: number;
  dataStart: number;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const EOCD_SIZE = 22;

export class ZipArchive {
  private readonly entries = new Map<string, Entry>();
  private readonly inflated = new Map<string, Uint8Array>();
  private readonly budget: ByteBudget;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly fileName: string,
    maxBytes: number,
  ) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let declared = 0;
    for (const entry of readDirectory(view)) {
      this.entries.set(entry.name, entry);
      declared += entry.declaredSize;
    }
    if (declared > maxBytes) {
      throw new ParseLimitError(
        `${fileName}: its ZIP entries declare ${formatBytes(declared)} when uncompressed, more than ${bytesLimit(maxBytes)}; nothing was inflated`,
      );
    }
    this.budget = new ByteBudget(maxBytes, (limit) => `${fileName}: its ZIP entries inflate to more than ${limit}`);
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The entry's bytes, inflated at most to the size it declared. */
  read(name: string): Uint8Array {
    const cached = this.inflated.get(name);
    if (cached) return cached;
    const entry = this.entries.get(name);
    if (!entry) throw new Error(`${this.fileName} has no ${name}`);
    const data = this.bytes.subarray(entry.dataStart, entry.dataStart + entry.compressedSize);
    const lie = () =>
      new ParseLimitError(
        `${this.fileName}: the ZIP entry ${name} inflates to more than the ${formatBytes(entry.declaredSize)} its headers declare (a damaged file or a decompression bomb); it was not inflated further`,
      );
    let out: Uint8Array;
    if (entry.method === 0) {
      if (data.length > entry.declaredSize) throw lie();
      out = data;
    } else {
      try {
        out = inflateRawSync(data, { maxOutputLength: Math.max(1, entry.declaredSize) });
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw lie();
        throw new Error(`${this.fileName}: the ZIP entry ${name} is damaged (${(err as Error).message})`);
      }
      if (out.length > entry.declaredSize) throw lie();
    }
    this.budget.take(out.length);
    this.inflated.set(name, out);
    return out;
  }
}

function readDirectory(view: DataView): Entry[] {
  const end = findEndOfDirectory(view);
  const disk = view.getUint16(end + 4, true);
  const directoryDisk = view.getUint16(end + 6, true);
  const count = view.getUint16(end + 10, true);
  const directoryOffset = view.getUint32(end + 16, true);
  if (disk !== 0 || directoryDisk !== 0) throw new Error('a ZIP split over several files is not supported');
  if (count === 0xffff || directoryOffset === 0xffffffff) throw new Error('ZIP64 archives are not supported');
  const entries: Entry[] = [];
  let at = directoryOffset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > view.byteLength || view.getUint32(at, true) !== CENTRAL)
      throw new Error('the ZIP central directory is damaged');
    const flags = view.getUint16(at + 8, true);
    const method = view.getUint16(at + 10, true);
    const compressedSize = view.getUint32(at + 20, true);
    const size = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const localOffset = view.getUint32(at + 42, true);
    if (at + 46 + nameLength > view.byteLength) throw new Error('the ZIP central directory is damaged');
    const name = new TextDecoder().decode(new Uint8Array(view.buffer, view.byteOffset + at + 46, nameLength));
    if (compressedSize === 0xffffffff || size === 0xffffffff || localOffset === 0xffffffff)
      throw new Error('ZIP64 archives are not supported');
    if (flags & 1) throw new Error(`the ZIP entry ${name} is encrypted`);
    if (method !== 0 && method !== 8)
      throw new Error(
        `the ZIP entry ${name} uses compression method ${method} (only stored and deflated entries are read)`,
      );
    entries.push({ name, method, compressedSize, ...localPart(view, localOffset, name, compressedSize, size) });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Where the entry's data starts (after its local header), and the larger of the two declared sizes. */
function localPart(
  view: DataView,
  offset: number,
  name: string,
  compressedSize: number,
  centralSize: number,
): { dataStart: number; declaredSize: number } {
  if (offset + 30 > view.byteLength || view.getUint32(offset, true) !== LOCAL)
    throw new Error(`the local header of the ZIP entry ${name} is missing`);
  const flags = view.getUint16(offset + 6, true);
  // With a data descriptor (bit 3) the local header's sizes are zero; the central directory's count.
  const localSize = flags & 8 ? 0 : view.getUint32(offset + 22, true);
  const dataStart = offset + 30 + view.getUint16(offset + 26, true) + view.getUint16(offset + 28, true);
  if (dataStart + compressedSize > view.byteLength)
    throw new Error(`the ZIP entry ${name} runs past the end of the file`);
  return { dataStart, declaredSize: Math.max(centralSize, localSize) };
}

function findEndOfDirectory(view: DataView): number {
  // The record is the last thing in the file, followed by a comment of at most 65535 bytes.
  const lowest = Math.max(0, view.byteLength - EOCD_SIZE - 0xffff);
  for (let at = view.byteLength - EOCD_SIZE; at >= lowest; at--) {
    if (view.getUint32(at, true) === EOCD) return at;
  }
  throw new Error('not a ZIP archive (no end of central directory)');
}
