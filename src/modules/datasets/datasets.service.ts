import type { Readable } from 'node:stream';
import type { DatasetDoc, Models } from '../../db/models';
import { insertWithNewId, isDuplicateKeyError } from '../../db/ids';
import { ConflictError, PayloadTooLargeError, RequestValidationError } from '../../errors';
import type { BoundedParser } from '../../parsing/parse-pool';
import { ParseLimitError } from '../../parsing/limits';
import { type Page, pageBounds } from '../../db/paging';
import type { RunReader } from '../../runs/reader';
import type { RunResponse } from '../../runs/response.schemas';
import { safeFileName } from '../files/safe-file-name';
import { createDatasetReader } from '../../db/dataset-reader';
import { discardUpload, ingestFile, type IngestedFile } from './dataset-ingest';
import { DatasetFormatError, formatOf } from '../../parsing/datasets';
import type { DatasetResponse, DatasetUploadQuery } from './datasets.schemas';

export interface DatasetServiceDeps {
  models: Models;
  runs: RunReader;
  limits: { maxBytes: number; rowsPerChunk: number };
  /** Decodes formats that decompress (Parquet) off the event loop, within the parse limits. */
  parser: BoundedParser;
  clock?: () => Date;
}

export interface IncomingFile {
  originalname: string;
  stream: Readable;
}

export function toDatasetResponse(doc: DatasetDoc): DatasetResponse {
  return {
    id: doc._id,
    name: doc.name,
    description: doc.description ?? null,
    filename: doc.filename,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
    row_count: doc.row_count,
    columns: [...doc.columns],
  };
}

const conflict = (name: string) => new ConflictError(`A dataset named '${name}' already exists`, 'DATASET_NAME_TAKEN');

/** A file that is not a dataset is a validation error of the `file` part (422), saying why. */
function invalidFile(err: DatasetFormatError, fileName: string): RequestValidationError {
  return new RequestValidationError([
    {
      type: 'value_error',
      loc: ['body', 'file'],
      msg: `Value error, ${err.message}`,
      input: fileName,
      ctx: { error: {} },
    },
  ]);
}

export function createDatasetService({ models, runs, limits, parser, clock = () => new Date() }: DatasetServiceDeps) {
  const { Dataset } = models;
  const reader = createDatasetReader(models);
  const idTaken = async (id: string) => (await Dataset.exists({ _id: id })) !== null;
  const nameTaken = async (name: string) => (await Dataset.exists({ name })) !== null;

  async function insert(
    meta: DatasetUploadQuery,
    fileName: string,
    format: string,
    file: IngestedFile,
  ): Promise<DatasetDoc> {
    const now = clock();
    return insertWithNewId(models.conn, 'dataset', idTaken, async (id, seq) => {
      const doc = {
        _id: id,
        seq,
        name: meta.name,
        description: meta.description,
        filename: fileName,
        format,
        columns: file.columns,
        row_count: file.rowCount,
        chunk_size: limits.rowsPerChunk,
        byte_size: file.byteSize,
        file_id: file.fileId,
        rows_key: file.rowsKey,
        created_at: now,
        updated_at: now,
      };
      await Dataset.create(doc);
      return doc;
    });
  }

  return {
    ...reader,
    /** Parses and stores one uploaded file as a new dataset (the upload middleware calls this). */
    async upload(meta: DatasetUploadQuery, incoming: IncomingFile): Promise<DatasetResponse> {
      const fileName = safeFileName(incoming.originalname);
      let format: string;
      try {
        format = formatOf(fileName);
      } catch (err) {
        throw err instanceof DatasetFormatError ? invalidFile(err, fileName) : err;
      }
      // Checked first so a taken name costs no parsing; the unique index still decides races.
      if (await nameTaken(meta.name)) throw conflict(meta.name);
      let file: IngestedFile;
      try {
        file = await ingestFile(models, incoming.stream, { fileName, format, parser, ...limits });
      } catch (err) {
        if (err instanceof ParseLimitError) throw new PayloadTooLargeError(err.message);
        throw err instanceof DatasetFormatError ? invalidFile(err, fileName) : err;
      }
      try {
        return toDatasetResponse(await insert(meta, fileName, format, file));
      } catch (err) {
        await discardUpload(models, file.fileId, file.rowsKey);
        if (isDuplicateKeyError(err) && (await nameTaken(meta.name))) throw conflict(meta.name);
        throw err;
      }
    },
    /** One page of the datasets in storage order (PySpur lists by primary key). */
    async list(page: Page): Promise<DatasetResponse[]> {
      const { skip, limit } = pageBounds(page);
      return (await Dataset.find().sort({ seq: 1 }).skip(skip).limit(limit).lean<DatasetDoc[]>()).map(
        toDatasetResponse,
      );
    },
    async get(id: string): Promise<DatasetResponse> {
      return toDatasetResponse(await reader.load(id));
    },
    /** Removes the dataset, then its rows and bytes (a crash in between leaves only orphans). */
    async remove(id: string): Promise<void> {
      const doc = await reader.load(id);
      await Dataset.deleteOne({ _id: id });
      await discardUpload(models, doc.file_id, doc.rows_key);
    },
    /**
     * The runs that used the dataset, newest first: its batches' parent runs. A row is a run of its
     * parent (R<parent>-<row>, listed under /run/?parent_only=false), not a use of the dataset of its own.
     */
    async listRuns(id: string, page: Page): Promise<RunResponse[]> {
      await reader.load(id);
      return runs.list({ inputDatasetId: id, parentOnly: true }, page);
    },
  };
}

export type DatasetService = ReturnType<typeof createDatasetService>;
