import { StoredRecordMissing } from './errors';
import { trusted } from 'mongoose';
import { deleteIfPresent, putBytes } from './gridfs';
import { insertWithNewId } from './ids';
import type { Models, OutputFileDoc } from './models';

const missing = () => new StoredRecordMissing('output file', 'Output file not found');

/**
 * The one writer of output files (`output_files`): created empty for a batch, appended to by the
 * batch's own activity (one call at a time), removed by the api. GridFS files cannot grow, so each
 * append stores its lines as one more GridFS file (a "part") and records it on the output file
 * document; a download concatenates the parts in order.
 */
export function createOutputFiles(models: Models, clock: () => Date = () => new Date()) {
  const { OutputFile } = models;
  const idTaken = async (id: string) => (await OutputFile.exists({ _id: id })) !== null;
  return {
    /** A new, empty output file (a download gives an empty body until the first append). */
    async create(runId: string | null, fileName: string): Promise<{ id: string }> {
      const now = clock();
      return insertWithNewId(models.conn, 'outputFile', idTaken, async (id, seq) => {
        await OutputFile.create({
          _id: id,
          seq,
          file_name: fileName,
          run_id: runId,
          parts: [],
          created_at: now,
          updated_at: now,
        });
        return { id };
      });
    },

    /** The record only; its parts' bytes are the caller's to delete (it knows the bucket's strays too). */
    async remove(outputFileId: string): Promise<void> {
      await OutputFile.deleteOne({ _id: outputFileId });
    },

    /** The output files of deleted runs, their parts' bytes first (a file's strays too), then their records. */
    async removeOfRuns(runIds: readonly string[]): Promise<void> {
      if (runIds.length === 0) return;
      const docs = await OutputFile.find({ run_id: trusted({ $in: runIds }) }).lean<OutputFileDoc[]>();
      for (const doc of docs) {
        const ids = new Map(doc.parts.map((p) => [p.file_id.toHexString(), p.file_id]));
        for (const file of await models.outputFiles.find({ 'metadata.output_file_id': doc._id }).toArray())
          ids.set(file._id.toHexString(), file._id);
        for (const fileId of ids.values()) await deleteIfPresent(models.outputFiles, fileId);
        await OutputFile.deleteOne({ _id: doc._id });
      }
    },

    /**
     * Appends lines (each without its newline) after everything appended so far. `part` numbers
     * the append: an activity retried after a stored append passes the same number and the
     * repeat is skipped. Without it the append goes after the last part.
     */
    async appendLines(outputFileId: string, lines: string[], opts: { part?: number } = {}): Promise<void> {
      if (lines.some((line) => /[\r\n]/.test(line)))
        throw new Error('appendLines: a line must not contain a line break');
      const doc = await OutputFile.findById(outputFileId).lean<OutputFileDoc>();
      if (!doc) throw missing();
      const n = opts.part ?? doc.parts.reduce((max, p) => Math.max(max, p.n + 1), 0);
      if (lines.length === 0 || doc.parts.some((p) => p.n === n)) return;
      const data = Buffer.from(lines.map((line) => `${line}\n`).join(''), 'utf8');
      const fileId = await putBytes(
        models.outputFiles,
        `${outputFileId}.${n}`,
        { output_file_id: outputFileId, n },
        data,
      );
      const part = { n, file_id: fileId, bytes: data.length, rows: lines.length };
      const res = await OutputFile.updateOne(
        { _id: outputFileId },
        { $push: { parts: part }, $set: { updated_at: clock() } },
      );
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
