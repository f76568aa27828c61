import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import multer from '@koa/multer';
import type { Middleware } from 'koa';
import { FIELD_NAME_LIMITS, PART_CHARSET } from '../../http/uploads';
import { DatasetUploadQuery, type DatasetResponse } from './datasets.schemas';
import type { DatasetService } from './datasets.service';

type StorageEngine = NonNullable<multer.Options['storage']>;
/** multer passes and expects `null` for success; its type definitions only allow an Error. */
const NO_ERROR = null as unknown as Error;

/**
 * A multer storage engine that hands the `file` part's stream straight to the dataset service,
 * which parses it and stores bytes and rows while it arrives: nothing is buffered whole.
 */
class DatasetStorage implements StorageEngine {
  stored: DatasetResponse | undefined;

  constructor(
    private readonly datasets: DatasetService,
    private readonly meta: DatasetUploadQuery,
  ) {}

  _handleFile(_req: IncomingMessage, file: multer.File, done: (error?: unknown) => void): void {
    const stream = (file as multer.File & { stream: Readable }).stream;
    this.datasets.upload(this.meta, { originalname: file.originalname, stream }).then(
      (dataset) => {
        this.stored = dataset;
        done();
      },
      (err: unknown) => done(err),
    );
  }

  /** multer calls this when the request fails after the file was stored (another part broke a limit). */
  _removeFile(_req: IncomingMessage, _file: multer.File, done: (error: Error) => void): void {
    const id = this.stored?.id;
    this.stored = undefined;
    if (!id) return done(NO_ERROR);
    this.datasets.remove(id).then(
      () => done(NO_ERROR),
      (err: Error) => done(err),
    );
  }
}

/**
 * Parses `POST /ds/`'s multipart body: exactly one file part named `file` (other file fields are
 * refused, text fields ignored). The query is checked first, so a request without a valid name is
 * refused by the route's own validation before a byte of the file is read. Size is enforced by the
 * ingest (413 with the limit); multer's counters bound the rest of the form.
 */
export function datasetUpload(datasets: DatasetService): Middleware {
  return async function datasetMultipart(ctx, next) {
    const request = ctx.request as { body?: unknown };
    const query = DatasetUploadQuery.safeParse(ctx.query);
    // Whatever else came (JSON, nothing), FastAPI reports the missing part: loc ["body", "file"].
    request.body = {};
    if (!query.success || !ctx.is('multipart/form-data')) return next();
    const storage = new DatasetStorage(datasets, query.data);
    const parse = multer({
      storage,
      ...PART_CHARSET,
      limits: { files: 1, fields: 20, fieldSize: 64 * 1024, parts: 21, ...FIELD_NAME_LIMITS },
    }).single('file');
    await parse(ctx, async () => undefined);
    request.body = storage.stored ? { file: storage.stored.id } : {};
    return next();
  };
}
