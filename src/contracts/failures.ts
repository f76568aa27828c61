import { ActivityFailure, ApplicationFailure } from '@temporalio/common';

/** Stable `ApplicationFailure` types shared by workflows, activities and the api. */
export const FailureType = {
  /** The node failed in a way retrying cannot fix (bad template, user code error, bad output). */
  NodeFailed: 'NodeExecutionError',
  /** The definition cannot be scheduled (cycle, no InputNode, link to a missing node). */
  InvalidGraph: 'InvalidGraph',
  /** A node type that is catalogued but has no executor yet. */
  NotExecutable: 'NodeNotExecutable',
  /** A write of the run's record failed in a way retrying cannot fix (too large, invalid). */
  ProjectionRejected: 'ProjectionRejected',
  /** A model call would pass its workflow's budget (on_exceed: pause): the run pauses at the node. */
  BudgetExceeded: 'BudgetExceeded',
  /** Workflow code failed in the sandbox (syntax, exception, no workflow, a limit): the client's to fix. */
  CodeRejected: 'WorkflowCodeRejected',
  /** The worker's Python sandbox cannot start: the code never ran. */
  SandboxUnavailable: 'SandboxUnavailable',
  /**
   * A short model call run as a local activity found a fleet-wide limit on its model: nothing was
   * sent, and the run asks the limit for a slot and makes the call as a regular activity.
   */
  ModelLimited: 'ModelLimited',
} as const;

/** Node failures no retry can mend: the activity policies' non-retryable types. */
export const FINAL_NODE_FAILURES: string[] = [FailureType.NodeFailed, FailureType.NotExecutable];

/** The application failure an activity failed with (an activity failure's cause), if it is one. */
export function applicationCause(err: unknown): ApplicationFailure | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure ? cause : undefined;
}
