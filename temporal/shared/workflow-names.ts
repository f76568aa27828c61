/** Workflow types by name, for clients that must not import workflow code (the api). */
export const WorkflowType = {
  spurRun: 'spurRun',
  spurPartialRun: 'spurPartialRun',
} as const;

export const runWorkflowId = (runId: string) => `run-${runId}`;
