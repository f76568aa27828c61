import type { Client } from '@temporalio/client';
import type { IdempotencyKeys } from '../db/idempotency-keys';
import type { Models, RunDoc } from '../db/models';
import { notFound } from '../errors';
import type { RunReader } from './reader';

type StoredRunLauncher = (run: RunDoc, client: Client) => Promise<boolean>;

/**
 * A replay whose first request died between claiming its key and starting the run: the run is
 * started the way the reconciler starts it (its workflow id is fixed, so a start racing the first
 * request's own joins it). A batch is left to the reconciler, which fails an unstarted batch
 * (its workflow input is not on the record).
 */
export function keyedRunRecovery(deps: {
  models: Models;
  reader: RunReader;
  temporal: Client;
  launch: StoredRunLauncher;
}) {
  return async function recoverRun(runId: string) {
    const run = await deps.models.Run.findById(runId).lean<RunDoc>();
    if (!run) throw notFound.run();
    if (run.status === 'PENDING' && !run.input_dataset_id) await deps.launch(run, deps.temporal);
    return deps.reader.get(runId);
  };
}

/**
 * The reconciler's launcher, aware of keys: a keyed run starts only if its key's record names it.
 * Otherwise its api died before the claim (or lost it to a concurrent request): no client was
 * answered with it, and a retry with the key gets its own run, so it is removed unstarted.
 */
export function keyedRunLauncher(keys: IdempotencyKeys, launch: StoredRunLauncher): StoredRunLauncher {
  return async (run, client) => {
    if (run.idempotency_key && !(await keys.names(run.idempotency_key, run._id))) {
      await keys.discardRun(run._id);
      return true; // handled: nothing is left to start
    }
    return launch(run, client);
  };
}
