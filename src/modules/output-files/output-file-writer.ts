import type { Models } from '../../db/models';
import { insertWithNewId } from '../../db/ids';
import { createOutputFileParts } from '../../db/output-file-parts';
import { safeFileName } from '../files/safe-file-name';

/** Output files for the batch engine: created here (named safely), appended to by src/db/output-file-parts. */
export function createOutputFileWriter(models: Models, clock: () => Date = () => new Date()) {
  const { OutputFile } = models;
  const idTaken = async (id: string) => (await OutputFile.exists({ _id: id })) !== null;

  return {
    /** A new, empty output file (a download gives an empty body until the first append). */
    async createOutputFile(runId: string | null, fileName: string): Promise<{ id: string }> {
      const now = clock();
      return insertWithNewId(models.conn, 'outputFile', idTaken, async (id, seq) => {
        await OutputFile.create({ _id: id, seq, file_name: safeFileName(fileName), run_id: runId, parts: [], created_at: now, updated_at: now });
        return { id };
      });
    },
    ...createOutputFileParts(models, clock),
  };
}

export type OutputFileWriter = ReturnType<typeof createOutputFileWriter>;
