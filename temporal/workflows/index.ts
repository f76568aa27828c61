// The workflow bundle's entry point (the worker's `workflowsPath`): every workflow type the
// worker hosts is exported from here, and nothing else.
export { spurRun } from './spur-run.workflow';
export { spurPartialRun } from './partial-run.workflow';
export { spurBatchRun } from './batch-run.workflow';
export { spurReconcile } from './reconcile.workflow';
