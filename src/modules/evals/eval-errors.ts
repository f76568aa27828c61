import { NotFoundError, RequestValidationError } from '../../errors';

/** A body field that names something wrong: FastAPI's 422 shape, saying which field and why. */
export function invalidField(field: string, msg: string, input: unknown): RequestValidationError {
  return new RequestValidationError([{ type: 'value_error', loc: ['body', field], msg, input }]);
}

export const evalNotFound = {
  suite: (nameOrId: string) => new NotFoundError(`Eval suite '${nameOrId}' not found`, 'EVAL_SUITE_NOT_FOUND'),
  run: (id: string) => new NotFoundError(`Eval run '${id}' not found`, 'EVAL_RUN_NOT_FOUND'),
  comparison: (id: string) => new NotFoundError(`Eval comparison '${id}' not found`, 'EVAL_COMPARISON_NOT_FOUND'),
  dataset: (id: string) => new NotFoundError(`Dataset '${id}' not found`, 'DATASET_NOT_FOUND'),
  version: (workflowId: string, version: number) =>
    new NotFoundError(`Workflow ${workflowId} has no version ${version}`, 'WORKFLOW_VERSION_NOT_FOUND'),
};
