import { workspaceScope } from '../../db/workspace-scope';
import type { HeldDeliveries } from '../../db/held-deliveries';
import type { IdempotencyKeys } from '../../db/idempotency-keys';
import { fromJsonText } from '../../db/json-text';
import type { HeldDeliveryDoc, RunDoc } from '../../db/models';
import type { RunRepository } from '../../db/runs/run-repository';
import { SpurError } from '../../errors';
import type { ClientRuns, RunOrigin } from '../../runs/client-runs';
import type { RunLauncher } from '../../runs/launcher';
import type { RunClaim, RunRecorder } from '../../runs/recorder';
import type { WorkflowService } from '../workflows/workflows.service';

export interface HeldReleaseDeps {
  held: HeldDeliveries;
  keys: Pick<IdempotencyKeys, 'find' | 'claim' | 'accept'>;
  runRecords: Pick<RunRepository, 'recordOf' | 'discardUnstarted'>;
  clientRuns: Pick<ClientRuns, 'recordAndLaunch'>;
  launcher: Pick<RunLauncher, 'launch'>;
  /** Records a delivery whose inputs no longer fit its workflow as a FAILED run saying why. */
  recorder: Pick<RunRecorder, 'record'>;
  workflows: Pick<WorkflowService, 'load'>;
  /** SPUR_IDEMPOTENCY_TTL_SECONDS: how long a released delivery's id keeps naming its run. */
  ttlMs: number;
}

/** Held deliveries read per page: a page is started before the next is read. */
const PAGE = 50;

/** Another release of the same workflow recorded this delivery's run first. */
class ReleasedElsewhere extends Error {}

/**
 * Starts a workflow's held deliveries, oldest first, each as the run its delivery would have
 * started (the webhook's own recordAndLaunch). Each becomes its run exactly once, however often a
 * release is interrupted and begun again, or runs beside another: the run claims the idempotency
 * record the held delivery names (its `_id`), so a second release finds the run instead of
 * recording another, and starts it if the first release died before it did. The held record goes
 * only once its run has started.
 */
export function createHeldRelease(deps: HeldReleaseDeps) {
  async function earlierRun(held: HeldDeliveryDoc): Promise<RunDoc | null> {
    const key = await deps.keys.find(held._id);
    return key ? deps.runRecords.recordOf(key.run_id) : null;
  }

  /** A redelivery of the same delivery id then replays its run, as it would have without the pause. */
  const accept = (held: HeldDeliveryDoc, runId: string) =>
    deps.keys.accept(held._id, held.respond === 'result' ? undefined : { status: 202, body: { run_id: runId } });

  function claimOf(held: HeldDeliveryDoc): RunClaim {
    let claimed: string | null = null;
    return {
      keyId: held._id,
      async claim(runId) {
        const scope = { principal: null, workspace: workspaceScope.current(), ...held.key_scope };
        const record = { id: held._id, scope, bodyHash: held.body_hash, runId, now: new Date(), ttlMs: deps.ttlMs };
        if (await deps.keys.claim(record)) {
          claimed = runId;
          return;
        }
        await deps.runRecords.discardUnstarted(runId);
        throw new ReleasedElsewhere();
      },
      started: async () => {
        if (claimed !== null) await accept(held, claimed);
      },
    };
  }

  /** Starts the run an earlier release (one that died before starting it) or a concurrent one recorded for it, if any. */
  async function startEarlier(held: HeldDeliveryDoc): Promise<boolean> {
    const earlier = await earlierRun(held);
    if (!earlier) return false;
    // Its fixed workflow id makes a second start join the first; a run that went on is left alone.
    if (earlier.status === 'PENDING') await deps.launcher.launch(earlier);
    await accept(held, earlier._id);
    return true;
  }

  async function releaseOne(held: HeldDeliveryDoc): Promise<void> {
    if (!(await startEarlier(held)) && !(await recordAndLaunch(held)) && !(await startEarlier(held)))
      throw new SpurError(
        'internal',
        'HELD_DELIVERY_UNCLAIMED',
        `Held delivery ${held._id} lost its run's claim to a run that is gone; it stays held`,
      );
    await deps.held.remove(held._id);
  }

  /** False when another release recorded its run first. */
  async function recordAndLaunch(held: HeldDeliveryDoc): Promise<boolean> {
    const inputs = fromJsonText<Record<string, Record<string, unknown>>>(held.initial_inputs);
    const origin = {
      trigger: { kind: 'webhook', id: held.trigger_id, deliveryId: held.delivery_id ?? null },
      callback: held.callback ?? null,
      releasesHeld: true,
    } satisfies RunOrigin;
    try {
      try {
        const body = { initial_inputs: inputs, parent_run_id: null, files: null };
        await deps.clientRuns.recordAndLaunch('webhook', held.workflow_id, body, { ...origin, claim: claimOf(held) });
      } catch (err) {
        // The workflow changed under the pause: the delivery was accepted, so its run is recorded, FAILED.
        if (!(err instanceof SpurError && (err.kind === 'invalid' || err.kind === 'validation'))) throw err;
        const { run } = await deps.recorder.record({
          kind: 'webhook',
          version: { current: await deps.workflows.load(held.workflow_id) },
          inputs,
          ...origin,
          claim: claimOf(held),
          failedBecause: `The held delivery's inputs no longer fit the workflow: ${err.message}`,
        });
        await accept(held, run._id);
      }
      return true;
    } catch (err) {
      if (err instanceof ReleasedElsewhere) return false;
      throw err;
    }
  }

  /** Starts every delivery the workflow holds, in the order they arrived; answers how many. */
  return async function releaseHeld(workflowId: string): Promise<number> {
    let released = 0;
    for (let page = await deps.held.oldest(workflowId, PAGE); page.length > 0;) {
      for (const held of page) await releaseOne(held);
      released += page.length;
      page = await deps.held.oldest(workflowId, PAGE);
    }
    return released;
  };
}

export type HeldRelease = ReturnType<typeof createHeldRelease>;
