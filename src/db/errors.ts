import { VALUE_REF_KEY } from '../engine/value-ref';
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

/**
 * A value on its way into a run holds a ref Spur sealed. Spur never hands one over: what it writes
 * refs into is read back before a node runs, and a client's values may not hold the key at all.
 * So a sealed ref in a node's output, a dataset row or a model's tool call is a copy from
 * elsewhere (another run's, another workflow's); it is refused, never read through.
 */
export class ForeignValueRefError extends SpurError {
  constructor(
    readonly path: (string | number)[],
    what = 'A value',
  ) {
    super(
      'invalid',
      'FOREIGN_VALUE_REF',
      `${what} holds a copy of a stored value's reference ('${VALUE_REF_KEY}' at ${path.length > 0 ? path.join('.') : 'its top'}), which Spur writes only for its own values; refused`,
    );
  }
}

export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (Number.isInteger(mib)) return `${mib} MiB`;
  const kib = bytes / 1024;
  return Number.isInteger(kib) ? `${kib} KiB` : `${bytes} bytes`;
}
