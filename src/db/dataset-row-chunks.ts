import type { Models } from './models';

/** One dataset row as stored: column name to cell. */
export type DatasetRow = Record<string, unknown>;

/**
 * JSON text per stored piece, in UTF-16 units: at most 3 UTF-8 bytes each, so a piece stays well
 * under MongoDB's and FerretDB's 16 MB document limit even for wide rows (long texts).
 */
export const MAX_PIECE_CHARS = 4 * 1024 * 1024;

export function chunkId(rowsKey: string, chunk: number, piece = 0): string {
  return piece === 0 ? `${rowsKey}:${chunk}` : `${rowsKey}:${chunk}:${piece}`;
}

/** Stores one chunk of rows; a chunk too long for one document continues in numbered pieces. */
export async function writeChunk(models: Models, rowsKey: string, chunk: number, rows: DatasetRow[]): Promise<void> {
  const pieces = splitText(JSON.stringify(rows), MAX_PIECE_CHARS);
  await models.DatasetRow.insertMany(
    pieces.map((text, piece) => ({
      _id: chunkId(rowsKey, chunk, piece),
      rows_key: rowsKey,
      rows: text,
      parts: pieces.length,
    })),
    { ordered: true },
  );
}

export async function readChunk(models: Models, rowsKey: string, chunk: number): Promise<DatasetRow[]> {
  const head = await models.DatasetRow.findById(chunkId(rowsKey, chunk)).lean();
  if (!head) throw new Error(`dataset rows ${chunkId(rowsKey, chunk)} are missing`);
  const rest = await Promise.all(
    Array.from({ length: (head.parts ?? 1) - 1 }, (_, i) =>
      models.DatasetRow.findById(chunkId(rowsKey, chunk, i + 1)).lean(),
    ),
  );
  let text = head.rows;
  for (const [i, piece] of rest.entries()) {
    if (!piece) throw new Error(`dataset rows ${chunkId(rowsKey, chunk, i + 1)} are missing`);
    text += piece.rows;
  }
  return JSON.parse(text) as DatasetRow[];
}

export async function removeChunks(models: Models, rowsKey: string): Promise<void> {
  await models.DatasetRow.deleteMany({ rows_key: rowsKey });
}

/** Cuts text into pieces of at most `max` units, never between the halves of a surrogate pair. */
export function splitText(text: string, max: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > max) {
    let end = start + max;
    const code = text.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end--;
    pieces.push(text.slice(start, end));
    start = end;
  }
  pieces.push(text.slice(start));
  return pieces;
}
