import { loggedPath } from './logged-path';
import type { Middleware } from 'koa';
import { isTooLargeToStore } from '../db/failure-kinds';
import { isDuplicateKeyError } from '../db/ids';
import type { Logger } from '../logger';
import { RETRY_AFTER_SECONDS, unreachableDependency } from './dependency-errors';
import { RequestValidationError, SpurError } from '../errors';
import { STATUS_OF_KIND } from './errors';
import { requestIdOf } from './request-id';

const MULTER_TOO_LARGE = new Set([
  'LIMIT_FILE_SIZE',
  'LIMIT_FILE_COUNT',
  'LIMIT_PART_COUNT',
  'LIMIT_FIELD_COUNT',
  'LIMIT_FIELD_VALUE',
  'LIMIT_FIELD_KEY',
]);

interface Rendered {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * First middleware of the chain: turns every error into FastAPI's envelope. Client mistakes are
 * 4xx with a readable `detail`; anything unexpected is logged with its stack and answered 500
 * without internals.
 */
export function errorMiddleware(logger: Logger): Middleware {
  return async function renderErrors(ctx, next) {
    try {
      await next();
    } catch (err) {
      const rendered = render(err);
      if (rendered.status === 503)
        logger.warn(
          { err: String(err), method: ctx.method, path: loggedPath(ctx.path), request_id: requestIdOf(ctx.state) },
          'request answered 503: a dependency is unavailable',
        );
      else if (rendered.status >= 500)
        logger.error(
          { err, method: ctx.method, path: loggedPath(ctx.path), request_id: requestIdOf(ctx.state) },
          'request failed',
        );
      ctx.status = rendered.status;
      for (const [name, value] of Object.entries(rendered.headers ?? {})) ctx.set(name, value);
      ctx.body = rendered.body;
    }
  };
}

function render(err: unknown): Rendered {
  if (err instanceof RequestValidationError) return { status: 422, body: { detail: err.details } };
  if (err instanceof SpurError) {
    const status = STATUS_OF_KIND[err.kind];
    const headers = status === 503 ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : undefined;
    return { status, body: { detail: err.message }, ...(headers ? { headers } : {}) };
  }
  // While MongoDB or Temporal is down every endpoint says so (503, try again later), never 500.
  const down = unreachableDependency(err);
  if (down) {
    return {
      status: 503,
      headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      body: { detail: `${down} is unavailable; try again in a few seconds` },
    };
  }
  const e = err as {
    code?: unknown;
    field?: unknown;
    status?: unknown;
    expose?: unknown;
    message?: unknown;
    name?: unknown;
  };
  if (e.name === 'MulterError' && typeof e.code === 'string') {
    if (MULTER_TOO_LARGE.has(e.code)) return { status: 413, body: { detail: uploadLimitMessage(e.code, e.field) } };
    if (e.code === 'LIMIT_UNEXPECTED_FILE') {
      return {
        status: 422,
        body: {
          detail: [
            {
              type: 'unexpected_file',
              loc: ['body', String(e.field ?? '')],
              msg: `Unexpected file field '${String(e.field ?? '')}'`,
              input: null,
            },
          ],
        },
      };
    }
    // A part without a name, a field name multer cannot use, a stream cut short: a malformed body.
    return { status: 400, body: { detail: `There was an error parsing the body: ${String(e.message)}` } };
  }
  if (typeof e.message === 'string' && isMalformedMultipart(e.message)) {
    return { status: 400, body: { detail: `There was an error parsing the body: ${e.message}` } };
  }
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose !== false) {
    return { status: e.status, body: { detail: typeof e.message === 'string' ? e.message : 'Bad Request' } };
  }
  if (isDuplicateKeyError(err))
    return { status: 409, body: { detail: 'A resource with the same unique key already exists' } };
  // What the client sent makes a record over MongoDB's document size: its mistake, never a 500.
  if (isTooLargeToStore(err))
    return {
      status: 413,
      body: { detail: "The request makes a record over MongoDB's limit of 16 MiB per document; send less" },
    };
  return { status: 500, body: { detail: 'Internal Server Error' } };
}

function uploadLimitMessage(code: string, field: unknown): string {
  const where = field ? ` (field '${String(field)}')` : '';
  switch (code) {
    case 'LIMIT_FILE_SIZE':
      return `File too large${where}`;
    case 'LIMIT_FILE_COUNT':
      return `Too many files${where}`;
    default:
      return `Multipart body over its limits: ${code}${where}`;
  }
}

function isMalformedMultipart(message: string): boolean {
  return /Boundary not found|Unexpected end of (form|multipart)|Malformed part header|Multipart: /i.test(message);
}
