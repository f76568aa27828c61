/**
 * Storage's own errors, for the api and the activities alike. They carry the HTTP status the api
 * answers with as `status` (the convention the error middleware already renders, as for
 * http-errors), so storage never imports the api's error classes.
 */
export class StoredRecordMissing extends Error {
  readonly status = 404;
  constructor(
    readonly what: 'run' | 'dataset' | 'output file',
    message: string,
  ) {
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
