/**
 * What a MongoDB failure means, decided in one place for every caller (the api's error
 * middleware, the run projection, the batch chunk flusher):
 *
 * - `unavailable`: no server to talk to, or one too busy to answer (connection refused or lost,
 *   server selection timed out, pool cleared, shutting down, FerretDB's SQLite locked or its
 *   PostgreSQL gone). It goes
 *   away by itself: writers retry with backoff for as long as it lasts; the api answers 503 with
 *   Retry-After.
 * - `rejected`: this write can never succeed as it is (a document too large, a validation or cast
 *   error). Writers fail what it belongs to at once (the run, the batch row) and never retry; the
 *   api answers 413 when the document is too large. A Mongoose validation or cast error at the api
 *   means its own zod schemas let a bad value through: a 500, logged. (A duplicate key is neither:
 *   it depends on what else is stored; its callers handle it with isDuplicateKeyError, src/db/ids.ts.)
 * - `unknown`: anything else. Decision: a surprise that may or may not repeat. Writers retry it,
 *   but at most UNKNOWN_FAILURE_ATTEMPTS times in all, then handle it as rejected, so an
 *   unrecognised error neither wedges a run in a retry loop nor fails it on the first blip. The
 *   api answers 500 and logs it: a 503 would send clients retrying into a bug, and a 4xx would
 *   blame them for it.
 */
export type StorageFailure = 'unavailable' | 'rejected' | 'unknown';

/** How many attempts in all a writer gives a write failing with an `unknown` error. */
export const UNKNOWN_FAILURE_ATTEMPTS = 5;

const UNAVAILABLE_NAMES = new Set([
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
  'MongoServerClosedError',
  'MongoExpiredSessionError',
  'PoolClosedError',
  'MongoWaitQueueTimeoutError',
  'DisconnectedError',
]);
/** Server codes of a server going away or not writable now (the driver's own retryable set). */
const UNAVAILABLE_CODES = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);
/** Socket errors the driver passes on as they are (seen: a bulk write on a socket the server closed, EPIPE). */
const SOCKET_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
/**
 * Also FerretDB on PostgreSQL, which answers an InternalError (code 1) carrying PostgreSQL's own
 * error when it loses its database: SQLSTATE class 08 (connection exceptions) and 57P01-57P03
 * (shutting down, crashed, not yet accepting connections), or a connection it cannot make.
 */
const UNAVAILABLE_MESSAGE =
  /database is locked|SQLITE_BUSY|ECONNREFUSED|ECONNRESET|EPIPE|connection .*(closed|timed out)|Client must be connected|server selection|buffering timed out|SQLSTATE (08[0-9A-Z]{3}|57P0[1-3])|failed to connect to `/i;

/** Mongoose refusing a document, or the server refusing its size: storing it again cannot work. */
const REJECTED_NAMES = new Set(['ValidationError', 'CastError', 'StrictModeError', 'BSONError', 'BSONVersionError']);
/** BSONObjectTooLarge, and FerretDB's/MongoDB's "document too large" codes. */
const TOO_LARGE_CODES = new Set([10334, 17419, 2, 17280]);
const TOO_LARGE_MESSAGE = /too large|larger than the maximum|exceeds (the )?maximum|BSONObj size/i;

type Fields = { name?: unknown; code?: unknown; message?: unknown; cause?: unknown; hasErrorLabel?: unknown };

function isUnavailable(e: Fields): boolean {
  if (typeof e.name === 'string' && UNAVAILABLE_NAMES.has(e.name)) return true;
  if (typeof e.code === 'number' && UNAVAILABLE_CODES.has(e.code)) return true;
  if (typeof e.code === 'string' && SOCKET_CODES.has(e.code)) return true;
  const labelled =
    typeof e.hasErrorLabel === 'function' ? (e.hasErrorLabel as (label: string) => boolean).bind(e) : null;
  if (labelled && (labelled('RetryableWriteError') || labelled('ResetPool'))) return true;
  return UNAVAILABLE_MESSAGE.test(String(e.message ?? ''));
}

function isTooLarge(e: Fields): boolean {
  return (
    (typeof e.code === 'number' && TOO_LARGE_CODES.has(e.code)) ||
    e instanceof RangeError ||
    TOO_LARGE_MESSAGE.test(String(e.message ?? ''))
  );
}

function isRejected(e: Fields): boolean {
  return (typeof e.name === 'string' && REJECTED_NAMES.has(e.name)) || isTooLarge(e);
}

/** The kind of a storage failure; looks through wrapped causes and a bulk write's per-document errors. */
export function storageFailureKind(err: unknown): StorageFailure {
  // An outage wins: a write that failed because the server went away says nothing about the document.
  if (someCause(err, isUnavailable)) return 'unavailable';
  if (someCause(err, isRejected)) return 'rejected';
  return 'unknown';
}

/** A rejected write whose document is over the size MongoDB stores (the api answers 413). */
export function isTooLargeToStore(err: unknown): boolean {
  return storageFailureKind(err) === 'rejected' && someCause(err, isTooLarge);
}

/**
 * Whether a writer tries again after its `attempt`-th attempt (1-based) failed with `err`: always
 * while the database is unavailable, never for a rejected write, a few times for anything else.
 */
export function retriesStorageWrite(err: unknown, attempt: number): boolean {
  const kind = storageFailureKind(err);
  return kind === 'unavailable' || (kind === 'unknown' && attempt < UNKNOWN_FAILURE_ATTEMPTS);
}

function someCause(err: unknown, test: (e: Fields) => boolean): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 6; e = (e as Fields).cause, depth++) {
    if (test(e as Fields)) return true;
    // A bulk write reports per-document errors beside its own.
    const writeErrors = (e as { writeErrors?: unknown }).writeErrors;
    if (Array.isArray(writeErrors) && writeErrors.some((w) => test(((w as { err?: unknown }).err ?? w) as Fields)))
      return true;
  }
  return false;
}
