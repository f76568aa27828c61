import type { Context } from 'koa';
import { type IdempotencyKeys, type KeyScope, keyRecordId, requestHash } from '../../db/idempotency-keys';
import { fromJsonText, toJsonText } from '../../db/json-text';
import type { IdempotencyKeyDoc } from '../../db/models';
import type { RunRepository } from '../../db/runs/run-repository';
import { workspaceScope } from '../../db/workspace-scope';
import { callerPrincipal } from '../../http/api-keys';
import { SpurError, RequestValidationError } from '../../errors';
import { z } from '../../zod';
import type { RunClaim } from '../../runs/recorder';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** The request header of the keyed routes (one schema: validation and the OpenAPI document). */
export const IdempotencyHeaders = z.object({
  [IDEMPOTENCY_HEADER]: z
    .string()
    .min(1)
    .max(255)
    .regex(
      /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/,
      'Idempotency-Key must be printable ASCII without leading or trailing spaces',
    )
    .optional()
    .openapi({
      description:
        'Any unique string (a UUID, say). Repeating the request with the same key and the same body within the retention window ' +
        "(SPUR_IDEMPOTENCY_TTL_SECONDS, 24 h) answers the first request's run (header Idempotent-Replayed: true) instead of starting " +
        'another; the same key with a different body is refused (422). Keys are scoped per workspace, route, workflow (run) and ' +
        'API key (or signed-in user).',
    }),
});

/** What the keyed routes document about their answers. */
export const REPLAY_RESPONSE_HEADERS = {
  [REPLAYED_HEADER]: '`true` when the answer is the replay of an earlier request with the same Idempotency-Key',
};

/** How long a replay waits for the first request with its key to start its run before finishing the start itself. */
const ACCEPT_WAIT_MS = 10_000;
const POLL_MS = { first: 25, max: 500 };

/** `webhook`: a trigger's deliveries, keyed by their dedupe header (scoped to the trigger, no caller). */
export type KeyedRoute = 'run' | 'start_run' | 'start_batch_run' | 'process_pause_action' | 'webhook';

export interface KeyedOperation<T> {
  route: KeyedRoute;
  /** The workflow (or, for a pause action, the run) the key is scoped to. */
  target: string;
  /** What a replay must repeat exactly (query and body). */
  request: unknown;
  /** The key is the sender's whoever calls (a webhook's delivery id): not scoped to the caller's API key. */
  anyCaller?: boolean;
  /** A route acting on an existing run (pause action) claims the key for it before it acts. */
  existingRunId?: string;
  /** The work; the claim is undefined when the request carries no key. */
  perform(claim: RunClaim | undefined): Promise<T>;
  /** Answers a replay from the run itself (a blocking run waits for it); without it, the first answer is stored and replayed. */
  replay?(runId: string): Promise<T>;
  /** Finishes what a first request that died before answering left undone (`keyId`: the key's record); answers as the route does. */
  recover(runId: string, keyId: string): Promise<unknown>;
}

/** Another request claimed the key between this one's look and its claim. */
class KeyTaken extends Error {}

export function createIdempotency({
  keys,
  runRecords,
  ttlMs,
}: {
  keys: IdempotencyKeys;
  runRecords: Pick<RunRepository, 'discardUnstarted'>;
  ttlMs: number;
}) {
  /** A request keyed by its Idempotency-Key header (none: performed as is). */
  function keyed<T>(ctx: Context, op: KeyedOperation<T>): Promise<T> {
    return keyedBy(ctx, ctx.get(IDEMPOTENCY_HEADER), op);
  }

  /** A request keyed by `key` from wherever the route takes it (a webhook's delivery id); empty: performed as is. */
  async function keyedBy<T>(ctx: Context, key: string, op: KeyedOperation<T>): Promise<T> {
    if (!key) return op.perform(undefined);
    const scope: KeyScope = {
      principal: op.anyCaller ? null : callerPrincipal(ctx.state),
      workspace: workspaceScope.current(),
      route: op.route,
      target: op.target,
      key,
    };
    const id = keyRecordId(scope);
    const bodyHash = requestHash(op.request);
    // A record can vanish between two looks (its first request failed and released it): look again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const held = await keys.find(id);
      if (held) {
        if (held.body_hash !== bodyHash) throw reusedKey(key, ttlMs);
        const accepted = await acceptedRecord(held, op);
        if (accepted) return replay(ctx, op, accepted);
        continue;
      }
      try {
        return await performClaimed(ctx, op, { id, scope, bodyHash });
      } catch (err) {
        if (!(err instanceof KeyTaken)) throw err;
      }
    }
    throw new SpurError(
      'conflict',
      'IDEMPOTENCY_KEY_CONTENDED',
      `Idempotency-Key '${key}' kept changing hands; send the request again`,
    );
  }

  async function performClaimed<T>(
    ctx: Context,
    op: KeyedOperation<T>,
    k: { id: string; scope: KeyScope; bodyHash: string },
  ): Promise<T> {
    let claimedRun: string | null = null;
    let accepted = false;
    const claimFor = async (runId: string) => {
      if (!(await keys.claim({ ...k, runId, now: new Date(), ttlMs }))) return false;
      claimedRun = runId;
      return true;
    };
    const claim: RunClaim = {
      keyId: k.id,
      async claim(runId) {
        if (await claimFor(runId)) return;
        await runRecords.discardUnstarted(runId);
        throw new KeyTaken();
      },
      // Once started, the key stays with the run whatever fails next. A blocking run's replays
      // wait for the run itself, so for them it is accepted now.
      started: async () => {
        accepted = true;
        if (op.replay) await keys.accept(k.id);
      },
    };
    try {
      if (op.existingRunId !== undefined && !(await claimFor(op.existingRunId))) throw new KeyTaken();
      const value = await op.perform(claim);
      // The run is started: from here on the key stays with it, even if storing the answer fails.
      accepted = true;
      if (claimedRun !== null && !op.replay) await keys.accept(k.id, { status: ctx.status, body: value });
      return value;
    } catch (err) {
      // Nothing was accepted: free the key, so a retry does the work (the failed run keeps its reason).
      if (claimedRun !== null && !accepted) await keys.release(k.id, claimedRun).catch(() => undefined);
      throw err;
    }
  }

  /**
   * The record once its first request has accepted it. A first request still at work is waited
   * for; one that died unanswered is finished here (starting a run is idempotent: its workflow id
   * is fixed). Null when the record went away (its request failed): the caller starts afresh.
   */
  async function acceptedRecord<T>(held: IdempotencyKeyDoc, op: KeyedOperation<T>): Promise<IdempotencyKeyDoc | null> {
    const deadline = Date.now() + ACCEPT_WAIT_MS;
    let record: IdempotencyKeyDoc | null = held;
    for (
      let wait = POLL_MS.first;
      !record.accepted_at && Date.now() < deadline;
      wait = Math.min(wait * 2, POLL_MS.max)
    ) {
      await new Promise((r) => setTimeout(r, wait));
      record = await keys.find(held._id);
      if (!record || record.run_id !== held.run_id) return null;
    }
    if (record.accepted_at) return record;
    const answer = await op.recover(record.run_id, record._id);
    const stored = op.replay ? undefined : { status: 200, body: answer };
    await keys.accept(record._id, stored);
    return {
      ...record,
      accepted_at: new Date(),
      answer_status: stored?.status ?? null,
      answer_body: stored ? toJsonText(answer) : null,
    };
  }

  async function replay<T>(ctx: Context, op: KeyedOperation<T>, record: IdempotencyKeyDoc): Promise<T> {
    ctx.set(REPLAYED_HEADER, 'true');
    if (op.replay) return op.replay(record.run_id);
    ctx.status = record.answer_status ?? 200;
    return fromJsonText<T>(record.answer_body) as T;
  }

  return { keyed, keyedBy };
}

function reusedKey(key: string, ttlMs: number): RequestValidationError {
  const hours = Math.round((ttlMs / 3_600_000) * 100) / 100;
  return new RequestValidationError([
    {
      type: 'idempotency_key_reused',
      loc: ['header', IDEMPOTENCY_HEADER],
      msg: `Idempotency-Key '${key}' was already used with a different request within ${hours} h; send a new key for a new request`,
      input: key,
    },
  ]);
}

export type Idempotency = ReturnType<typeof createIdempotency>;
