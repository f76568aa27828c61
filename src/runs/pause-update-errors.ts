// How a run's workflow and Temporal answer a pause decision sent as an Update: what the api's pause
// actions and a bulk approve or decline both read from them.
import { WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { PAUSE_FORBIDDEN, PAUSE_REFUSED, type PauseDecider, type PauseRefusalDetails } from '../contracts/pauses';
import { BadRequestError, ForbiddenError } from '../errors';

/** A refusal by the run's workflow, naming who took its latest decision (the database may not have it yet). */
export class PauseRefused extends BadRequestError {
  constructor(
    message: string,
    readonly lastDecider: PauseDecider | null,
    /** The pause the action named is one the workflow has not reached yet (it is replaying up to it). */
    readonly ahead = false,
  ) {
    super(message);
  }
}

/** The workflow's refusal of a decider its pause's `approvers` leave out: 403, nothing decided. */
export function pauseForbiddenOf(err: unknown): ForbiddenError | null {
  if (!(err instanceof WorkflowUpdateFailedError)) return null;
  const cause = err.cause;
  if (!(cause instanceof ApplicationFailure) || cause.type !== PAUSE_FORBIDDEN) return null;
  return new ForbiddenError(cause.message, 'NOT_AN_APPROVER');
}

/** The workflow's own refusal of an action (PySpur's 400s), naming its latest decider. */
export function pauseRefusalOf(err: unknown): PauseRefused | null {
  if (!(err instanceof WorkflowUpdateFailedError)) return null;
  const cause = err.cause;
  if (!(cause instanceof ApplicationFailure) || cause.type !== PAUSE_REFUSED) return null;
  const [decider, ahead] = (cause.details ?? []) as Partial<PauseRefusalDetails>;
  return new PauseRefused(cause.message, decider ?? null, ahead === true);
}

export function isDeadline(err: unknown): boolean {
  // The client's own wrapper for an Update call that ran out of time or was cut (DEADLINE_EXCEEDED
  // or CANCELLED, e.g. ended during a retry backoff): the action may not have arrived. The signal
  // that follows is harmless if it did: it names the pause, and a closed pause ignores it.
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown } };
  // gRPC DEADLINE_EXCEEDED (4), directly or as the cause of the client's wrapper error.
  return e.code === 4 || e.cause?.code === 4 || (typeof e.message === 'string' && /deadline/i.test(e.message));
}

/**
 * Temporal refuses an Update while the run's last workflow task failed or timed out and is being
 * retried (a worker killed or starved mid-task): FAILED_PRECONDITION, "Workflow Task in failed
 * state". Like a worker that is gone, that passes: the action goes as a signal, applied once a task
 * succeeds.
 */
export function isAbortedByTaskFailure(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { message, cause } = e as { message?: unknown; cause?: unknown };
    if (/update due to unexpected workflow task failure/i.test(String(message ?? ''))) return true;
    e = cause;
  }
  return false;
}

export function isWorkflowTaskFailing(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { code, message, cause } = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (code === 9 && /workflow task in failed state/i.test(String(message ?? ''))) return true;
    e = cause;
  }
  return false;
}
