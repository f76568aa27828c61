/** Workflow types by name, for clients that must not import workflow code (the api). */
export const WorkflowType = {
  spurRun: 'spurRun',
  spurPartialRun: 'spurPartialRun',
  spurBatchRun: 'spurBatchRun',
  spurReconcile: 'spurReconcile',
  spurCallbackDelivery: 'spurCallbackDelivery',
  spurScheduledRun: 'spurScheduledRun',
  spurModelLimit: 'spurModelLimit',
  spurApprovalDelivery: 'spurApprovalDelivery',
  spurCodeParse: 'spurCodeParse',
  spurEvalRun: 'spurEvalRun',
  spurRetention: 'spurRetention',
  spurRunAction: 'spurRunAction',
} as const;

/**
 * `run-<runId>`, behind an optional prefix: installations (or test suites) that share one Temporal
 * namespace each count runs from R1, and the prefix keeps their workflow ids apart.
 */
export const runWorkflowId = (runId: string, prefix = '') => `${prefix}run-${runId}`;

/** `eval-<evalRunId>`, behind the same prefix as runs: the workflow that runs and scores an eval run. */
export const evalWorkflowId = (evalRunId: string, prefix = '') => `${prefix}eval-${evalRunId}`;
