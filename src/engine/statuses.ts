/** PySpur's enums, uppercase on the wire (CANCELED with one L). */
export const RUN_STATUSES = ['PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'PAUSED', 'CANCELED'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** A run that has not ended: its workflow (or, for PENDING, its start) is still to come. */
export const OPEN_RUN_STATUSES: readonly RunStatus[] = ['PENDING', 'RUNNING', 'PAUSED'];
/** A run that has ended (an eval run ends in the same three). */
export const FINAL_RUN_STATUSES: readonly RunStatus[] = ['COMPLETED', 'FAILED', 'CANCELED'];
export const isFinalStatus = (status: string): boolean => (FINAL_RUN_STATUSES as readonly string[]).includes(status);

export const TASK_STATUSES = ['PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELED', 'PAUSED'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** What started a run no client asked for: a schedule's fire, a webhook delivery, a parent run's SubworkflowNode. */
export const RUN_TRIGGER_KINDS = ['schedule', 'webhook', 'subworkflow'] as const;
export type RunTriggerKind = (typeof RUN_TRIGGER_KINDS)[number];

export const UPSTREAM_FAILURE = 'Upstream failure';

/** PySpur's message on a cancelled run. */
export const CANCELED_MESSAGE = 'Workflow has been canceled successfully.';

export const PAUSE_ACTIONS = ['APPROVE', 'DECLINE', 'OVERRIDE'] as const;
export type PauseAction = (typeof PAUSE_ACTIONS)[number];
