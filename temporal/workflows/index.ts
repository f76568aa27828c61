// The workflow bundle's entry point (temporal/workflow-bundle.ts): every workflow type the
// worker hosts is exported from here, and nothing else.
export { spurRun } from './spur-run.workflow';
export { spurPartialRun } from './partial-run.workflow';
export { spurBatchRun } from './batch-run.workflow';
export { ragIngest } from './rag-ingest.workflow';
export { ragIndex } from './rag-index.workflow';
export { spurReconcile } from './reconcile.workflow';
export { spurCallbackDelivery } from './callback-delivery.workflow';
export { spurScheduledRun } from './scheduled-run.workflow';
export { spurModelLimit } from './model-limit.workflow';
export { spurApprovalDelivery } from './approval-delivery.workflow';
export { spurCodeParse } from './code-parse.workflow';
export { spurEvalRun } from './eval-run.workflow';
export { spurRetention } from './retention.workflow';
export { spurRunAction } from './run-action.workflow';
