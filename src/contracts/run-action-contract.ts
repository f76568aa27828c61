import type { PauseAction } from '../engine/statuses';
import type { Role } from './roles';

/** What a bulk action does to each run it matched (POST /api/runs/actions/). */
export const RUN_ACTION_KINDS = ['cancel', 'retry', 'rerun', 'approve', 'decline'] as const;
export type RunActionKind = (typeof RUN_ACTION_KINDS)[number];

/**
 * What each action needs beyond the route's `pause.decide`: deciding pauses is an approver's, the
 * rest acts on runs as `run` does (cancel_workflow, rerun, start_run). An approve or decline also
 * needs each pause's own `approvers` to name the caller: the run's workflow checks that per run.
 */
export const ACTION_PERMISSIONS: Readonly<Record<RunActionKind, 'run' | 'pause.decide'>> = {
  cancel: 'run',
  retry: 'run',
  rerun: 'run',
  approve: 'pause.decide',
  decline: 'pause.decide',
};

/** The decision an approve or decline sends to each run's pause. */
export const PAUSE_ACTION_OF: Readonly<Partial<Record<RunActionKind, PauseAction>>> = {
  approve: 'APPROVE',
  decline: 'DECLINE',
};

/** What was done to a run (the action's past tense), or `skipped`: there was nothing to do (a cancel of a run that had ended). */
const DONE = ['canceled', 'retried', 'rerun', 'approved', 'declined', 'skipped'] as const;

/** How one matched run stands: `pending` until the action reaches it, then done, or `failed` with the reason. */
export const RUN_ACTION_OUTCOMES = ['pending', ...DONE, 'failed'] as const;
export type RunActionOutcome = (typeof RUN_ACTION_OUTCOMES)[number];

export const DONE_OUTCOMES: readonly RunActionOutcome[] = DONE;

/** An action's own state: RUNNING while its workflow works through the matches. */
export const RUN_ACTION_STATUSES = ['RUNNING', 'COMPLETED', 'CANCELED', 'FAILED'] as const;
export type RunActionStatus = (typeof RUN_ACTION_STATUSES)[number];

/** Who decides the pauses of an approve or decline: the caller, as the api established it. */
export interface RunActionDecider {
  userId: string;
  username: string | null;
  role: Role | null;
}

/** Input of the `spurRunAction` workflow: pages of matched runs, one activity each, at a bounded rate. */
export interface RunActionInput {
  actionId: string;
  /** How many runs were matched (stored with the action, by position). */
  total: number;
  pageSize: number;
  /** The least time between the starts of two pages: pageSize / SPUR_RUN_ACTION_RATE seconds. */
  pageIntervalMs: number;
  /** Where a workflow continued as new goes on, with what its pages counted so far. */
  next?: number;
  tally?: RunActionTally;
}

/** Matched runs acted on (or with nothing to do) and runs that failed. */
export interface RunActionTally {
  done: number;
  failed: number;
}

export interface RunActionPageInput {
  actionId: string;
  /** Positions `from` to `from + count - 1` of the matches. */
  from: number;
  count: number;
  /** What the pages before counted: the action's progress is that plus this page's. */
  before: RunActionTally;
}

export interface RunActionFinish {
  actionId: string;
  status: 'COMPLETED' | 'CANCELED';
}

export const runActionWorkflowId = (actionId: string, prefix = '') => `${prefix}run-action-${actionId}`;
