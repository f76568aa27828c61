import { AsyncLocalStorage } from 'node:async_hooks';

/** Who asked for the runs an api request starts, in the two forms runs record. */
export interface RunCaller {
  /**
   * For the ledger's `api_key` group (`started_by`): `key:<first 12 hex of the key's SHA-256>`
   * (the digest, never the key), `user:<id>` or `session` (a browser login), or null (no keys configured).
   */
  id: string | null;
  /**
   * As people read it, the Temporal Web UI's `SpurStartedBy` (`started_by_name`): a user's
   * username, `key:<tag>` for a configured key, `session` for its browser login, `local` on the
   * keyless local instance; null when no caller came with the request (a webhook delivery).
   */
  name: string | null;
}

/**
 * Set once per request by the api (app.ts), read where runs are recorded, so the many ways to
 * start a run need not pass it along.
 */
const caller = new AsyncLocalStorage<RunCaller>();

export function withRunCaller<T>(who: RunCaller, work: () => T): T {
  return caller.run(who, work);
}

export function runCaller(): RunCaller | null {
  return caller.getStore() ?? null;
}
