/**
 * The api's error hierarchy. Every error a client can cause is an AppError with an HTTP status and
 * a stable code; the error middleware renders it as FastAPI does (`{"detail": ...}`).
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class NotFoundError extends AppError {
  constructor(message: string, code = 'NOT_FOUND') {
    super(404, code, message);
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, code = 'BAD_REQUEST') {
    super(400, code, message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, code = 'CONFLICT') {
    super(409, code, message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message: string) {
    super(413, 'PAYLOAD_TOO_LARGE', message);
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

export class RequestValidationError extends AppError {
  constructor(readonly details: ValidationDetail[]) {
    super(422, 'VALIDATION_FAILED', details.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
  }
}

export const notFound = {
  workflow: () => new NotFoundError('Workflow not found', 'WORKFLOW_NOT_FOUND'),
  run: () => new NotFoundError('Run not found', 'RUN_NOT_FOUND'),
  dataset: () => new NotFoundError('Dataset not found', 'DATASET_NOT_FOUND'),
  outputFile: () => new NotFoundError('Output file not found', 'OUTPUT_FILE_NOT_FOUND'),
  key: () => new NotFoundError('Key not found', 'KEY_NOT_FOUND'),
};
