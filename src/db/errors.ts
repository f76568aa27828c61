/**
 * Storage's own errors, for the api and the activities alike. They carry the HTTP status the api
 * answers with as `status` (the convention the error middleware already renders, as for
 * http-errors), so storage never imports the api's error classes.
 */
export class StoredRecordMissing extends Error {
  readonly status = 404;
  constructor(readonly what: 'run' | 'dataset' | 'output file', message: string) {
    super(message);
    this.name = 'StoredRecordMissing';
  }
}

/** A value over SPUR_MAX_VALUE_BYTES: a request carrying one is refused (413), a node producing one fails. */
export class ValueTooLargeError extends Error {
  readonly status = 413;
  constructor(
    readonly bytes: number,
    readonly limitBytes: number,
    what = 'A value',
  ) {
    super(`${what} is ${bytes} bytes, over the limit of ${formatBytes(limitBytes)} per value (SPUR_MAX_VALUE_BYTES)`);
    this.name = 'ValueTooLargeError';
  }
}

export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (Number.isInteger(mib)) return `${mib} MiB`;
  const kib = bytes / 1024;
  return Number.isInteger(kib) ? `${kib} KiB` : `${bytes} bytes`;
}

const TRANSIENT_NAMES = new Set([
  'MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoServerSelectionError', 'MongooseServerSelectionError', 'MongoPoolClearedError',
  'MongoNotConnectedError', 'MongoTopologyClosedError', 'MongoServerClosedError', 'DisconnectedError',
]);

/**
 * Whether a storage error may go away by itself (the database is unreachable, restarting, or
 * FerretDB's SQLite is busy): such writes are retried with backoff. Anything else (a document too
 * large, a validation or cast error, a duplicate) fails the same way on every attempt.
 */
export function isTransientStorageError(err: unknown): boolean {
  const e = err as { name?: unknown; message?: unknown; hasErrorLabel?: (label: string) => boolean };
  if (typeof e.name === 'string' && TRANSIENT_NAMES.has(e.name)) return true;
  if (typeof e.hasErrorLabel === 'function' && (e.hasErrorLabel('RetryableWriteError') || e.hasErrorLabel('ResetPool'))) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return /database is locked|SQLITE_BUSY|ECONNREFUSED|ECONNRESET|EPIPE|connection .*(closed|timed out)|Client must be connected|server selection/i.test(message);
}
