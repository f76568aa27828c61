import { StoredRecordMissing } from './errors';
import { putBytes } from './gridfs';
import type { Models, OutputFileDoc } from './models';

const missing = () => new StoredRecordMissing('output file', 'Output file not found');

/**
 * Appends to output files, for the batch engine. GridFS files cannot grow, so each append stores
 * its lines as one more GridFS file (a "part") and records it on the output file document; a
 * download concatenates the parts in order. Only the batch's own activity appends, one call at a time.
 */
export function createOutputFileParts(models: Models, clock: () => Date = () => new Date()) {
  const { OutputFile } = models;
  return {
    /**
     * Appends lines (each without its newline) after everything appended so far. `part` numbers
     * the append: an activity retried after a stored append passes the same number and the
     * repeat is skipped. Without it the append goes after the last part.
     */
    async appendLines(outputFileId: string, lines: string[], opts: { part?: number } = {}): Promise<void> {
      if (lines.some((line) => /[\r\n]/.test(line))) throw new Error('appendLines: a line must not contain a line break');
      const doc = await OutputFile.findById(outputFileId).lean<OutputFileDoc>();
      if (!doc) throw missing();
      const n = opts.part ?? doc.parts.reduce((max, p) => Math.max(max, p.n + 1), 0);
      if (lines.length === 0 || doc.parts.some((p) => p.n === n)) return;
      const data = Buffer.from(lines.map((line) => `${line}\n`).join(''), 'utf8');
      const fileId = await putBytes(models.outputFiles, `${outputFileId}.${n}`, { output_file_id: outputFileId, n }, data);
      const part = { n, file_id: fileId, bytes: data.length, rows: lines.length };
      const res = await OutputFile.updateOne({ _id: outputFileId }, { $push: { parts: part }, $set: { updated_at: clock() } });
      if (res.matchedCount === 0) {
        // Deleted while we wrote: do not leave the part behind.
        await models.outputFiles.delete(fileId).catch(() => undefined);
        throw missing();
      }
    },

    /** Lines stored so far, for a writer that numbers its parts by first line (n + rows = next). */
    async linesWritten(outputFileId: string): Promise<number> {
      const doc = await OutputFile.findById(outputFileId, { parts: 1 }).lean<Pick<OutputFileDoc, 'parts'>>();
      if (!doc) throw missing();
      return doc.parts.reduce((max, p) => Math.max(max, p.n + (p.rows ?? 0)), 0);
    },
  };
}
