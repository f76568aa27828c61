import multer from '@koa/multer';
import type { Middleware } from 'koa';
import { formatBytes } from '../db/errors';
import { type GridFsStaging, discardStaged } from '../db/gridfs';
import { PayloadTooLargeError } from '../errors';
import { GridFsUploadStorage, type StagedFile, isStagedFile } from './gridfs-upload-storage';
import { z } from '../zod';

/**
 * multer turns `a[b]` and `a[3]` field names into nested objects and arrays, unbounded by default:
 * `node_id[100000000]` made a sparse array that a 422 then echoed as a 500 MB `null` list. Our
 * forms have flat names; a little nesting stays allowed, more is a 400 (malformed body).
 */
export const FIELD_NAME_LIMITS = { fieldNestingDepth: 4, fieldArrayIndexLimit: 100 };

/**
 * Browsers, requests and httpx put a file name in `filename="…"` as raw UTF-8 (FastAPI reads it
 * so); multer's default, Latin-1, stored `résumé.csv` as `rÃ©sumÃ©.csv`.
 */
export const PART_CHARSET = { defParamCharset: 'utf8' };

/** A file field of a multipart form: the file as multipartUpload staged it in GridFS. */
export const StagedFileSchema = z
  .custom<StagedFile>(isStagedFile, { message: 'Expected a file' })
  .openapi({ type: 'string', format: 'binary' });

export interface UploadLimits {
  maxFiles: number;
  maxFileBytes: number;
}

/**
 * Parses a multipart body with hard limits enforced while streaming (a file or file count over its
 * limit is a 413 naming the limit; multer's other LIMIT_* errors are rendered as 413 by the error
 * middleware) and hands the route one object: the text fields plus the files under `fileField`, so
 * a single zod schema validates both. Files stream into GridFS (staged) as they arrive, so the api
 * holds at most a chunk of each; whatever the route did not take by the end of the request (it
 * failed, a limit was hit) is deleted.
 */
export function multipartUpload(fileField: string, limits: UploadLimits, staging: GridFsStaging): Middleware {
  return async function multipartBody(ctx, next) {
    if (!ctx.is('multipart/form-data')) return next();
    const storage = new GridFsUploadStorage(staging);
    const parse = multer({
      storage,
      ...PART_CHARSET,
      limits: {
        fileSize: limits.maxFileBytes,
        files: limits.maxFiles,
        fields: 20,
        fieldSize: 64 * 1024,
        parts: limits.maxFiles + 20,
        ...FIELD_NAME_LIMITS,
      },
    }).array(fileField);
    try {
      await parse(ctx, async () => undefined).catch((err: unknown) => {
        throw overLimit(err, limits) ?? err;
      });
      const request = ctx.request as { body?: Record<string, unknown>; files?: unknown };
      // No file part at all is a missing field (as FastAPI reports it), not an empty list.
      const files = Array.isArray(request.files) && request.files.length > 0 ? { [fileField]: request.files } : {};
      // The file field comes from file parts only: multer reads a text field `files[0][gridfsId][$ne]`
      // as a nested object, which would pass for a staged file.
      const { [fileField]: _textField, ...fields } = request.body ?? {};
      request.body = { ...fields, ...files };
      await next();
    } finally {
      await discardStaged(staging, storage.started).catch(() => undefined);
    }
  };
}

/** A file or file count over its limit, as a 413 that names the limit and its setting. */
function overLimit(err: unknown, limits: UploadLimits): PayloadTooLargeError | null {
  const e = err as { name?: unknown; code?: unknown; field?: unknown };
  if (e.name !== 'MulterError') return null;
  const where = e.field ? ` (field '${String(e.field)}')` : '';
  if (e.code === 'LIMIT_FILE_SIZE')
    return new PayloadTooLargeError(
      `File too large${where}: the limit is ${formatBytes(limits.maxFileBytes)} per file (SPUR_MAX_UPLOAD_BYTES)`,
    );
  // The count is the route's (one file for a preview) or SPUR_MAX_UPLOAD_FILES: no setting to name.
  if (e.code === 'LIMIT_FILE_COUNT')
    return new PayloadTooLargeError(`Too many files${where}: the limit is ${limits.maxFiles} per request`);
  return null;
}
