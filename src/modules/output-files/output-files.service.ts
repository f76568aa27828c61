import { createOutputFiles } from '../../db/output-files';
import { Readable } from 'node:stream';
import type { Models, OutputFileDoc } from '../../db/models';
import type { RunRepository } from '../../db/runs/run-repository';
import { notFound } from '../../errors';
import { type Page, pageBounds } from '../../db/paging';
import { createOutputFileWriter } from './output-file-writer';
import type { OutputFileResponse } from './output-files.schemas';

export function toOutputFileResponse(doc: OutputFileDoc): OutputFileResponse {
  return {
    id: doc._id,
    file_name: doc.file_name,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

export interface OutputFileDownload {
  fileName: string;
  length: number;
  stream: Readable;
}

export function createOutputFileService(
  models: Models,
  runs: Pick<RunRepository, 'clearOutputFile'>,
  clock: () => Date = () => new Date(),
) {
  const { OutputFile } = models;
  const bucket = models.outputFiles;

  async function load(id: string): Promise<OutputFileDoc> {
    const doc = await OutputFile.findById(id).lean<OutputFileDoc>();
    if (!doc) throw notFound.outputFile();
    return doc;
  }

  return {
    ...createOutputFileWriter(models, clock),
    /** One page of the output files in storage order. */
    async list(page: Page): Promise<OutputFileResponse[]> {
      const { skip, limit } = pageBounds(page);
      return (await OutputFile.find().sort({ seq: 1 }).skip(skip).limit(limit).lean<OutputFileDoc[]>()).map(
        toOutputFileResponse,
      );
    },
    async get(id: string): Promise<OutputFileResponse> {
      return toOutputFileResponse(await load(id));
    },
    /** The parts in order as one stream: one part's GridFS chunks in memory at a time. */
    async download(id: string): Promise<OutputFileDownload> {
      const doc = await load(id);
      const parts = [...doc.parts].sort((a, b) => a.n - b.n);
      async function* bytes(): AsyncGenerator<Buffer> {
        for (const part of parts)
          for await (const chunk of bucket.openDownloadStream(part.file_id)) yield chunk as Buffer;
      }
      return {
        fileName: doc.file_name,
        length: parts.reduce((sum, p) => sum + p.bytes, 0),
        stream: Readable.from(bytes(), { objectMode: false }),
      };
    },
    /**
     * Removes the record, unlinks it from runs (runs are never deleted, unlike PySpur's cascade),
     * then the bytes, including parts an interrupted append left unrecorded.
     */
    async remove(id: string): Promise<void> {
      const doc = await load(id);
      await createOutputFiles(models).remove(id);
      await runs.clearOutputFile(id);
      const ids = new Map(doc.parts.map((p) => [p.file_id.toHexString(), p.file_id]));
      for (const file of await bucket.find({ 'metadata.output_file_id': id }).toArray())
        ids.set(file._id.toHexString(), file._id);
      for (const fileId of ids.values()) await bucket.delete(fileId).catch(() => undefined);
    },
  };
}

export type OutputFileService = ReturnType<typeof createOutputFileService>;
