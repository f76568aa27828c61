import { type IdempotencyKeys, keyRecordId, requestHash } from '../db/idempotency-keys';
import type { RunRepository } from '../db/runs/run-repository';
import { workspaceScope } from '../db/workspace-scope';
import type { RunLauncher } from './launcher';
import type { RunClaim } from './recorder';

/** Long enough for any retry of a step; once its item is settled, nothing reads the claim again. */
const CLAIM_TTL_MS = 7 * 24 * 3_600_000;
/** A claim lost to a concurrent attempt is looked up again this many times. */
const ATTEMPTS = 3;

/** Another attempt of the same step holds the claim. */
class ClaimTaken extends Error {}

export interface RunActionClaimDeps {
  keys: Pick<IdempotencyKeys, 'find' | 'claim' | 'accept'>;
  runRecords: Pick<RunRepository, 'recordOf' | 'discardUnstarted'>;
  launcher: Pick<RunLauncher, 'launch'>;
}

/**
 * At most one new run per (bulk action, run), however often its step runs (a retried activity, a
 * worker killed mid-step): the new run is recorded under a key derived from the two, as a client's
 * Idempotency-Key records it (recorded first, then claimed, then launched), so a second attempt
 * finds the first one's run and launches it (a second launch joins the first), and the reconciler
 * starts a run only if the key names it.
 */
export function createRunActionClaims(deps: RunActionClaimDeps) {
  return async function once(actionId: string, runId: string, make: (claim: RunClaim) => Promise<string>) {
    const scope = {
      principal: null,
      workspace: workspaceScope.current(),
      route: 'run_action',
      target: actionId,
      key: runId,
    };
    const id = keyRecordId(scope);
    const bodyHash = requestHash(scope);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const held = await deps.keys.find(id);
      if (held) {
        const earlier = await deps.runRecords.recordOf(held.run_id);
        if (earlier?.status === 'PENDING') await deps.launcher.launch(earlier);
        return held.run_id;
      }
      const claim: RunClaim = {
        keyId: id,
        async claim(newRunId) {
          if (await deps.keys.claim({ id, scope, bodyHash, runId: newRunId, now: new Date(), ttlMs: CLAIM_TTL_MS }))
            return;
          await deps.runRecords.discardUnstarted(newRunId);
          throw new ClaimTaken();
        },
        started: () => deps.keys.accept(id),
      };
      try {
        return await make(claim);
      } catch (err) {
        if (!(err instanceof ClaimTaken)) throw err;
      }
    }
    throw new Error(`the new run of ${runId} for ${actionId} kept changing hands`);
  };
}

export type RunActionClaims = ReturnType<typeof createRunActionClaims>;
