import type { ErrorKind } from '../errors';

/** The HTTP status of each kind of SpurError: the one place errors meet HTTP. */
export const STATUS_OF_KIND: Readonly<Record<ErrorKind, number>> = {
  not_found: 404,
  invalid: 400,
  validation: 422,
  conflict: 409,
  forbidden: 403,
  too_large: 413,
  unavailable: 503,
  upstream_failed: 502,
  timed_out: 504,
  internal: 500,
};
