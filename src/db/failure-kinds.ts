/**
 * Two kinds of MongoDB failure callers treat differently: "no server to talk to" (retry later,
 * answer 503) and "this document can never be stored" (fail what it belongs to, never retry).
 */

const UNREACHABLE = new Set([
  'MongoServerSelectionError', 'MongooseServerSelectionError', 'MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoNotConnectedError',
  'MongoTopologyClosedError', 'MongoPoolClearedError', 'MongoExpiredSessionError', 'PoolClosedError', 'MongoWaitQueueTimeoutError',
]);
/** Socket errors the driver passes on as they are (seen: a bulk write on a socket the server closed, EPIPE). */
const SOCKET_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Whether this error (or one it wraps) says MongoDB could not be reached. */
export function isMongoUnreachable(err: unknown): boolean {
  return someCause(err, (e) => {
    if (typeof e.name === 'string' && UNREACHABLE.has(e.name)) return true;
    if (typeof e.code === 'string' && SOCKET_CODES.has(e.code)) return true;
    return e.name === 'MongooseError' && /buffering timed out/.test(String(e.message ?? ''));
  });
}

/** Mongoose refusing a document, or the server refusing its size: storing it again cannot work. */
const PERMANENT_NAMES = new Set(['ValidationError', 'CastError', 'StrictModeError', 'BSONError', 'BSONVersionError']);
/** BSONObjectTooLarge, and FerretDB's/MongoDB's "document too large" codes. */
const PERMANENT_CODES = new Set([10334, 17419, 2, 17280]);

/** Whether this write can never succeed as it is (too large, invalid); anything else may be transient. */
export function isPermanentWriteError(err: unknown): boolean {
  if (isMongoUnreachable(err)) return false;
  return someCause(err, (e) => {
    if (typeof e.name === 'string' && PERMANENT_NAMES.has(e.name)) return true;
    if (typeof e.code === 'number' && PERMANENT_CODES.has(e.code)) return true;
    return e instanceof RangeError || /too large|larger than the maximum|exceeds (the )?maximum/i.test(String(e.message ?? ''));
  });
}

type Fields = { name?: unknown; code?: unknown; message?: unknown; cause?: unknown };

function someCause(err: unknown, test: (e: Fields) => boolean): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 6; e = (e as Fields).cause, depth++) {
    if (test(e as Fields)) return true;
    // A bulk write reports per-document errors beside its own.
    const writeErrors = (e as { writeErrors?: unknown }).writeErrors;
    if (Array.isArray(writeErrors) && writeErrors.some((w) => test(((w as { err?: unknown }).err ?? w) as Fields))) return true;
  }
  return false;
}
