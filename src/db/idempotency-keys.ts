import { createHash } from 'node:crypto';
import { trusted } from 'mongoose';
import { isBusyError, isDuplicateKeyError } from './ids';
import { toJsonText } from './json-text';
import type { IdempotencyKeyDoc, Models } from './models';
import { DEFAULT_WORKSPACE } from './workspace-scope';

/** Where a key applies: the caller (API key digest, or none), its workspace, the route and its workflow or run. */
export interface KeyScope {
  principal: string | null;
  /**
   * The workspace the request acts in (null: outside any, `default`'s). A signed-in user is one
   * caller in each of their workspaces, and records are a workspace's own: without it, a key used
   * in one would claim an `_id` another cannot see, and every retry there would collide on it.
   */
  workspace: string | null;
  route: string;
  target: string;
  key: string;
}

export interface NewKeyRecord {
  id: string;
  scope: KeyScope;
  bodyHash: string;
  runId: string;
  now: Date;
  ttlMs: number;
}

/**
 * The record's `_id`: one digest per scope, so the `_id` index makes a key claimable once. In
 * `default` the digest leaves the workspace out, as an installation without workspaces computed it:
 * a retry of a request recorded there answers as its first request did.
 */
export function keyRecordId(scope: KeyScope): string {
  const { principal, workspace, route, target, key } = scope;
  const inWorkspace = workspace === null || workspace === DEFAULT_WORKSPACE ? [] : [workspace];
  return createHash('sha256')
    .update(JSON.stringify([principal, route, target, key, ...inWorkspace]))
    .digest('hex');
}

/** sha256 of a request's canonical JSON (object keys sorted): equal requests, equal hashes. */
export function requestHash(request: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(request)))
    .digest('hex');
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => [k, canonical(v)]),
  );
}

const BUSY_RETRIES = 6;
/** How often a process removes expired records itself (where no TTL index does: FerretDB v1). */
const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * Storage of idempotency keys. Only inserts decide who holds a key (FerretDB v1 updates are
 * read-then-write, so a conditional update could not): the first insert of a scope's `_id` wins,
 * and from then on only the winning request (or one finishing after it died) writes the record.
 */
export function createIdempotencyKeys(models: Models) {
  const { IdempotencyKey: Key } = models;
  let lastSweep = 0;

  /** At most once per SWEEP_EVERY_MS, in the background: expired records nobody asks for again. */
  function sweepNowAndThen(now: Date): void {
    if (now.getTime() - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now.getTime();
    Key.deleteMany({ expires_at: trusted({ $lt: now }) }).catch(() => undefined);
  }

  return {
    /** The live record of a scope; an expired one is removed (MongoDB's TTL monitor lags up to a minute). */
    async find(id: string, now = new Date()): Promise<IdempotencyKeyDoc | null> {
      const doc = await Key.findById(id).lean<IdempotencyKeyDoc>();
      if (!doc || doc.expires_at > now) return doc;
      // Only that expired record: a request that has claimed the key anew keeps its own.
      await Key.deleteOne({ _id: id, created_at: doc.created_at });
      return null;
    },

    /** The keys naming deleted runs: a replay of one is then a new request. */
    async removeOfRuns(runIds: readonly string[]): Promise<void> {
      if (runIds.length > 0) await Key.deleteMany({ run_id: trusted({ $in: runIds }) });
    },

    /** Inserts the record naming the run; false when another request holds the key. */
    async claim(k: NewKeyRecord): Promise<boolean> {
      const doc = {
        _id: k.id,
        key: k.scope.key,
        route: k.scope.route,
        target: k.scope.target,
        body_hash: k.bodyHash,
        run_id: k.runId,
        created_at: k.now,
        expires_at: new Date(k.now.getTime() + k.ttlMs),
        accepted_at: null,
        answer_status: null,
        answer_body: null,
      };
      sweepNowAndThen(k.now);
      for (let attempt = 0; ; attempt++) {
        try {
          await Key.create(doc);
          return true;
        } catch (err) {
          if (isDuplicateKeyError(err)) return false;
          if (!isBusyError(err) || attempt >= BUSY_RETRIES) throw err;
          await new Promise((r) => setTimeout(r, 25 * 2 ** attempt));
        }
      }
    },

    /** The run started (the action was applied): replays may answer, with `answer` when the route stores one. */
    async accept(id: string, answer?: { status: number; body: unknown }): Promise<void> {
      await Key.updateOne(
        { _id: id },
        {
          $set: {
            accepted_at: new Date(),
            ...(answer ? { answer_status: answer.status, answer_body: toJsonText(answer.body) } : {}),
          },
        },
      );
    },

    /** The first request failed before its run started: the key is free again (a retry gets a new run). */
    async release(id: string, runId: string): Promise<void> {
      await Key.deleteOne({ _id: id, run_id: runId });
    },

    /** Whether the record of `keyId` names `runId` (the reconciler starts a keyed run only then). */
    async names(keyId: string, runId: string): Promise<boolean> {
      const doc = await Key.findById(keyId, { run_id: 1 }).lean<Pick<IdempotencyKeyDoc, 'run_id'>>();
      return doc?.run_id === runId;
    },
  };
}

export type IdempotencyKeys = ReturnType<typeof createIdempotencyKeys>;
