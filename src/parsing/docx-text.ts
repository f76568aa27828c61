import mammoth from 'mammoth';
import { ZipArchive } from './zip-archive';

/** What mammoth reads a DOCX through (its lib/zipfile.js interface). */
interface OpenedDocx {
  exists(name: string): boolean;
  read(name: string, encoding?: string): Promise<string | Uint8Array>;
  write(name: string, contents: string): void;
  toArrayBuffer(): Promise<ArrayBuffer>;
}

// mammoth takes an archive it need not open itself as `{ file }` (lib/unzip.js): every part it
// reads then comes from the bounded ZipArchive, never from its own unzip (JSZip), which would
// inflate whatever the file holds.
const extractRawText = mammoth.extractRawText as unknown as (input: { file: OpenedDocx }) => Promise<{ value: string }>;

/** The text of a DOCX, its parts inflated within `maxBytes` in all. */
export async function docxText(bytes: Uint8Array, fileName: string, maxBytes: number): Promise<string> {
  const zip = new ZipArchive(bytes, fileName, maxBytes);
  const file: OpenedDocx = {
    exists: (name) => zip.has(name),
    read: async (name, encoding) => {
      const data = zip.read(name);
      return encoding ? new TextDecoder(encoding).decode(data) : data;
    },
    write: () => {
      throw new Error('a parsed DOCX is read only');
    },
    toArrayBuffer: () => Promise.reject(new Error('a parsed DOCX is read only')),
  };
  return (await extractRawText({ file })).value;
}
