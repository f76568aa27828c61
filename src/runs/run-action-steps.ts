import type { ItemOutcome } from '../db/run-actions';
import type { RunRepository } from '../db/runs/run-repository';
import { PAUSE_ACTION_OF, type RunActionDecider, type RunActionKind } from '../contracts/run-action-contract';
import { type ErrorKind, RequestValidationError, SpurError, notFound } from '../errors';
import type { PauseDecision } from './pause-decision';
import type { RunActionClaims } from './run-action-claims';
import { CANCELLABLE, type RunCancel } from './run-cancel';
import type { Reruns } from './reruns';
import type { Retry } from './retries';

/** What a bulk action does to each run, as its record says. */
export interface RunActionPlan {
  id: string;
  action: RunActionKind;
  /** A rerun's start node. */
  fromNodeId: string | null;
  /** Who decides an approve's or decline's pauses. */
  decider: RunActionDecider | null;
}

export interface RunActionStepDeps {
  runRecords: Pick<RunRepository, 'recordOf'>;
  cancelRun: RunCancel;
  retry: Retry;
  reruns: Pick<Reruns, 'recordAndLaunch'>;
  claims: RunActionClaims;
  decide: PauseDecision;
}

/** What a run's own state or rules refuse: the run's outcome is `failed` with the reason, never tried again. */
const REFUSED: ReadonlySet<ErrorKind> = new Set(['not_found', 'invalid', 'validation', 'conflict', 'forbidden']);

type Step = (plan: RunActionPlan, runId: string) => Promise<ItemOutcome>;

/** A refusal as a run's reason: a rerun's 422 names the request's field, which a bulk action's run has no say in. */
const reasonOf = (err: SpurError): string =>
  err instanceof RequestValidationError
    ? err.details.map((d) => d.msg.replace(/^Value error, /, '')).join('; ')
    : err.message;

/**
 * One run's step of a bulk action, through the same code a client's request for that run goes
 * through: the run's cancel, the one recorder and launcher (a retry, a rerun), the pause's own
 * Update. Each step may run again after a crash and acts once: a cancel asked twice is one cancel,
 * a new run is recorded under the action's claim, a decision's Update id is the action's and the run's.
 */
export function createRunActionSteps(deps: RunActionStepDeps) {
  async function decide(plan: RunActionPlan, runId: string): Promise<ItemOutcome> {
    const action = PAUSE_ACTION_OF[plan.action];
    if (!action || !plan.decider) throw new Error(`${plan.id} (${plan.action}) decides no pause`);
    await deps.decide(runId, {
      action,
      decider: plan.decider,
      updateId: `${plan.id}:${runId}`,
      comments: `Bulk action ${plan.id}`,
    });
    return { outcome: action === 'APPROVE' ? 'approved' : 'declined' };
  }

  const steps: Record<RunActionKind, Step> = {
    async cancel(_plan, runId) {
      const run = await deps.runRecords.recordOf(runId);
      if (!run) throw notFound.run();
      if (!CANCELLABLE.has(run.status))
        return { outcome: 'skipped', error: `The run had ended already (${run.status})` };
      await deps.cancelRun(run);
      return { outcome: 'canceled' };
    },
    async retry(plan, runId) {
      const newRunId = await deps.claims(plan.id, runId, (claim) => deps.retry(runId, claim));
      return { outcome: 'retried', newRunId };
    },
    async rerun(plan, runId) {
      const newRunId = await deps.claims(plan.id, runId, async (claim) => {
        const body = { from_node_id: plan.fromNodeId ?? '', input_overrides: null, version: 'same' as const };
        const original = await deps.runRecords.recordOf(runId);
        if (!original) throw notFound.run();
        return (await deps.reruns.recordAndLaunch(runId, body, original.run_type, claim)).id;
      });
      return { outcome: 'rerun', newRunId };
    },
    approve: decide,
    decline: decide,
  };

  return async function act(plan: RunActionPlan, runId: string): Promise<ItemOutcome> {
    try {
      return await steps[plan.action](plan, runId);
    } catch (err) {
      if (err instanceof SpurError && REFUSED.has(err.kind)) return { outcome: 'failed', error: reasonOf(err) };
      throw err;
    }
  };
}

export type RunActionSteps = ReturnType<typeof createRunActionSteps>;
