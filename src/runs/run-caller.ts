import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who asked for the runs an api request starts, for the ledger's `api_key` group: `key:<first 12
 * hex of the key's SHA-256>` (the digest, never the key), `session` (a browser login), or null
 * (no keys configured). Set once per request by the api (app.ts), read where runs are recorded,
 * so the many ways to start a run need not pass it along.
 */
const caller = new AsyncLocalStorage<string | null>();

export function withRunCaller<T>(id: string | null, work: () => T): T {
  return caller.run(id, work);
}

export function runCaller(): string | null {
  return caller.getStore() ?? null;
}
