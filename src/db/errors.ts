import { NotFoundError, SpurError } from '../errors';

/** A record storage was asked to read is not there (deleted meanwhile, or never was). */
export class StoredRecordMissing extends NotFoundError {
  constructor(
    readonly what: 'run' | 'dataset' | 'output file',
    message: string,
  ) {
    super(message, `${what.replace(' ', '_').toUpperCase()}_NOT_FOUND`);
  }
}

/** A value over SPUR_MAX_VALUE_BYTES: a request carrying one is refused (413), a node producing one fails. */
export class ValueTooLargeError extends SpurError {
  constructor(
    readonly bytes: number,
    readonly limitBytes: number,
    what = 'A value',
  ) {
    super(
      'too_large',
      'VALUE_TOO_LARGE',
      `${what} is ${bytes} bytes, over the limit of ${formatBytes(limitBytes)} per value (SPUR_MAX_VALUE_BYTES)`,
    );
  }
}

export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (Number.isInteger(mib)) return `${mib} MiB`;
  const kib = bytes / 1024;
  return Number.isInteger(kib) ? `${kib} KiB` : `${bytes} bytes`;
}
