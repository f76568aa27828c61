/**
 * What can go wrong, in the service's own terms: every error a caller can cause or meet is a
 * SpurError of a kind with a stable code. The api maps kinds to HTTP statuses (src/http/errors.ts);
 * the worker and the run's shared code throw the same errors without knowing about HTTP.
 */
export type ErrorKind =
  /** The thing named does not exist. */
  | 'not_found'
  /** The request cannot be carried out as sent. */
  | 'invalid'
  /** Fields of the request fail their schema (FastAPI's 422 shape). */
  | 'validation'
  /** The state of the thing does not allow it now. */
  | 'conflict'
  /** The caller is known but their role or the thing's rules do not let them do this. */
  | 'forbidden'
  | 'too_large'
  /** A dependency (Temporal, MongoDB) cannot be reached; the same request may work later. */
  | 'unavailable'
  /** A service Spur called (an LLM provider) or a run Spur waited on failed. */
  | 'upstream_failed'
  | 'timed_out'
  | 'internal';

export class SpurError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class NotFoundError extends SpurError {
  constructor(message: string, code = 'NOT_FOUND') {
    super('not_found', code, message);
  }
}

export class BadRequestError extends SpurError {
  constructor(message: string, code = 'BAD_REQUEST') {
    super('invalid', code, message);
  }
}

export class ConflictError extends SpurError {
  constructor(message: string, code = 'CONFLICT') {
    super('conflict', code, message);
  }
}

export class ForbiddenError extends SpurError {
  constructor(message: string, code = 'FORBIDDEN') {
    super('forbidden', code, message);
  }
}

export class PayloadTooLargeError extends SpurError {
  constructor(message: string) {
    super('too_large', 'PAYLOAD_TOO_LARGE', message);
  }
}

/** One item of FastAPI's HTTPValidationError `detail` array. */
export interface ValidationDetail {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

export class RequestValidationError extends SpurError {
  constructor(readonly details: ValidationDetail[]) {
    super('validation', 'VALIDATION_FAILED', details.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
  }
}

export const notFound = {
  workflow: () => new NotFoundError('Workflow not found', 'WORKFLOW_NOT_FOUND'),
  run: () => new NotFoundError('Run not found', 'RUN_NOT_FOUND'),
  dataset: () => new NotFoundError('Dataset not found', 'DATASET_NOT_FOUND'),
  outputFile: () => new NotFoundError('Output file not found', 'OUTPUT_FILE_NOT_FOUND'),
  key: () => new NotFoundError('Key not found', 'KEY_NOT_FOUND'),
};
