import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { RunLookups } from '../db/runs/run-lookups';
import { type PauseActionRequest, PauseRefusal, pauseActionUpdate } from '../contracts/pauses';
import type { RunActionDecider } from '../contracts/run-action-contract';
import { runWorkflowId } from '../contracts/workflow-names';
import type { PauseAction } from '../engine/statuses';
import { BadRequestError, SpurError } from '../errors';
import {
  isAbortedByTaskFailure,
  isDeadline,
  isWorkflowTaskFailing,
  pauseForbiddenOf,
  pauseRefusalOf,
} from './pause-update-errors';

export interface PauseDecisionDeps {
  runRecords: Pick<RunLookups, 'openPausesOf'>;
  temporal: () => Client;
  workflowIdPrefix: string;
  /** How long one Update may wait for a worker to apply it. */
  waitMs: number;
}

export interface BulkDecision {
  action: PauseAction;
  decider: RunActionDecider;
  /** The Update's id: Temporal applies one decision per id once, however often it is sent. */
  updateId: string;
  comments: string;
}

/**
 * A bulk action's decision on one run's open pause, sent as the pause's own Update: the run's
 * workflow checks it as it checks any decision (the pause's `approvers` first), so a decider the
 * pause leaves out is refused (ForbiddenError) and nothing is decided. Refusals are the api's
 * (BadRequestError: not paused, decided already); a worker that does not answer in time, or a
 * workflow task being retried, is `unavailable`: the step is tried again under the same update id.
 */
export function createPauseDecision(deps: PauseDecisionDeps) {
  const handle = (runId: string) => deps.temporal().workflow.getHandle(runWorkflowId(runId, deps.workflowIdPrefix));

  const openPauseOf = async (runId: string) => (await deps.runRecords.openPausesOf(runId))[0] ?? null;

  return async function decide(runId: string, decision: BulkDecision): Promise<void> {
    const { decider } = decision;
    let request: PauseActionRequest = {
      action: decision.action,
      inputs: {},
      userId: decider.userId,
      username: decider.username,
      role: decider.role,
      comments: decision.comments,
    };
    const send = () =>
      deps
        .temporal()
        .withDeadline(Date.now() + deps.waitMs, () =>
          handle(runId).executeUpdate(pauseActionUpdate, { args: [request], updateId: decision.updateId }),
        );
    for (let named = false; ; named = true) {
      try {
        await send();
        return;
      } catch (err) {
        const forbidden = pauseForbiddenOf(err);
        if (forbidden) throw forbidden;
        const refusal = pauseRefusalOf(err);
        if (refusal?.ahead) throw unavailable('its worker is replaying up to the pause');
        // A workflow replaying up to a pause it recorded refuses an unnamed decision: named after the open pause, it waits for it.
        if (refusal && !named && refusal.message !== PauseRefusal.alreadyDecided) {
          const open = await openPauseOf(runId);
          if (open) {
            request = { ...request, pauseId: open._id };
            continue;
          }
        }
        if (refusal) throw refusal;
        if (err instanceof WorkflowNotFoundError) throw new BadRequestError(PauseRefusal.notPaused);
        if (isDeadline(err) || isWorkflowTaskFailing(err) || isAbortedByTaskFailure(err))
          throw unavailable(`no worker applied the decision within ${deps.waitMs / 1000} s`);
        throw err;
      }
    }
  };
}

const unavailable = (why: string) => new SpurError('unavailable', 'PAUSE_DECISION_WAITING', `Not decided yet: ${why}`);

export type PauseDecision = ReturnType<typeof createPauseDecision>;
