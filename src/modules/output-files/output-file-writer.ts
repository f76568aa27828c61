import type { Models } from '../../db/models';
import { createOutputFiles } from '../../db/output-files';
import { safeFileName } from '../files/safe-file-name';

/** Output files for the batch engine, named safely. */
export function createOutputFileWriter(models: Models, clock: () => Date = () => new Date()) {
  const files = createOutputFiles(models, clock);
  return {
    ...files,
    createOutputFile: (runId: string | null, fileName: string): Promise<{ id: string }> =>
      files.create(runId, safeFileName(fileName)),
  };
}

export type OutputFileWriter = ReturnType<typeof createOutputFileWriter>;
