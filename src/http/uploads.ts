import multer from '@koa/multer';
import type { Middleware } from 'koa';
import { type GridFsStaging, discardStaged } from '../db/gridfs';
import { GridFsUploadStorage } from './gridfs-upload-storage';

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

/** A file multer kept in memory (routes without GridFS staging: knowledge-base documents are parsed at once). */
export interface UploadedFile {
  originalname: string;
  mimetype: string;
  buffer: Buffer;
}

export interface UploadLimits {
  maxFiles: number;
  maxFileBytes: number;
}

/**
 * Parses a multipart body with hard limits enforced while streaming (multer raises LIMIT_* errors,
 * rendered as 413 by the error middleware) and hands the route one object: the text fields plus
 * the files under `fileField`, so a single zod schema validates both. Files stream into GridFS
 * (staged) as they arrive; whatever the route did not take by the end of the request (it failed,
 * a limit was hit) is deleted. Without `staging` files are kept in memory (bounded by the limits).
 */
export function multipartUpload(fileField: string, limits: UploadLimits, staging?: GridFsStaging): Middleware {
  return async function multipartBody(ctx, next) {
    if (!ctx.is('multipart/form-data')) return next();
    const storage = staging ? new GridFsUploadStorage(staging) : undefined;
    const parse = multer({
      storage: storage ?? multer.memoryStorage(),
      ...PART_CHARSET,
      limits: { fileSize: limits.maxFileBytes, files: limits.maxFiles, fields: 20, fieldSize: 64 * 1024, parts: limits.maxFiles + 20, ...FIELD_NAME_LIMITS },
    }).array(fileField);
    try {
      await parse(ctx, async () => undefined);
      const request = ctx.request as { body?: Record<string, unknown>; files?: unknown };
      // No file part at all is a missing field (as FastAPI reports it), not an empty list.
      const files = Array.isArray(request.files) && request.files.length > 0 ? { [fileField]: request.files } : {};
      request.body = { ...(request.body ?? {}), ...files };
      await next();
    } finally {
      if (staging && storage) await discardStaged(staging, storage.started).catch(() => undefined);
    }
  };
}
