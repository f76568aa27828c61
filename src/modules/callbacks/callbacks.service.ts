import { OutboundRefusedError, type Resolver, checkedUrl, trustedHosts } from '../../outbound/checked-target';
import { createCallbackDeliveries } from '../../db/callback-deliveries';
import type { Models } from '../../db/models';
import { createRunLookups } from '../../db/runs/run-lookups';
import type { StoredCallback } from '../../db/runs/run-documents';
import type { CallbackEvent } from '../../engine/callback-events';
import { RequestValidationError, notFound } from '../../errors';
import { type Page, pageBounds } from '../../db/paging';
import { pyDateTime } from '../../timestamps';
import type { SecretBox } from '../../secrets/secret-box';
import { sealCallbackSecret } from '../../secrets/callback-secret';
import type { CallbackInput, CallbackShown, RunCallbacksResponse } from './callbacks.schemas';

export interface CallbackServiceDeps {
  models: Models;
  box: SecretBox;
  /** SPUR_OUTBOUND_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** SPUR_OUTBOUND_ALLOW_HOSTS: a receiver there is taken whatever its address, as the delivery reaches it. */
  allowHosts: readonly string[];
  resolve?: Resolver;
}

/** Run callbacks on the api's side: checked and sealed at submission, their deliveries listed. */
export function createCallbackService({ models, box, allowPrivate, allowHosts, resolve }: CallbackServiceDeps) {
  const deliveries = createCallbackDeliveries(models);
  const runs = createRunLookups(models);
  const trusted = trustedHosts(allowHosts);

  /**
   * What the run record keeps of a requested callback. Its url must resolve to addresses the
   * installation allows, or be a host it trusts (422 on `body.callback.url` otherwise), before any
   * record exists.
   */
  async function prepare(request: CallbackInput): Promise<StoredCallback> {
    try {
      await checkedUrl(request.url, allowPrivate, resolve, trusted);
    } catch (err) {
      const why =
        err instanceof OutboundRefusedError ? err.message : `its host cannot be resolved (${(err as Error).message})`;
      throw new RequestValidationError([
        {
          type: 'value_error',
          loc: ['body', 'callback', 'url'],
          msg: `Value error, callback URL refused: ${why}`,
          input: request.url,
          ctx: { error: {} },
        },
      ]);
    }
    return { url: request.url, events: request.events, secret: sealCallbackSecret(box, request.secret) };
  }

  return {
    prepare,

    /**
     * The callback a schedule or trigger keeps after a create or PUT: a request that leaves it out
     * keeps `kept`, null removes it, a new one is checked and sealed as `prepare` does.
     */
    async replace(
      request: CallbackInput | null | undefined,
      kept: StoredCallback | null,
    ): Promise<StoredCallback | null> {
      if (request === undefined) return kept;
      return request && prepare(request);
    },

    /** The run's callback and one page of its deliveries. */
    async list(runId: string, page: Page): Promise<RunCallbacksResponse> {
      if (!(await runs.exists(runId))) throw notFound.run();
      const [callback, docs] = await Promise.all([
        runs.callbackOf(runId),
        deliveries.listOfRun(runId, pageBounds(page)),
      ]);
      return {
        run_id: runId,
        callback: shownCallback(callback),
        deliveries: docs.map((d) => ({
          id: d._id,
          event: d.event as CallbackEvent,
          url: d.url,
          status: d.status,
          reason: d.reason,
          created_at: pyDateTime(d.created_at),
          updated_at: pyDateTime(d.updated_at),
          attempts: d.attempts.map((a) => ({
            attempt: a.attempt,
            time: pyDateTime(a.time),
            status_code: a.status_code ?? null,
            error: a.error ?? null,
            duration_ms: a.duration_ms ?? null,
          })),
        })),
      };
    },
  };
}

export type CallbackService = ReturnType<typeof createCallbackService>;

/** What an answer shows of a stored callback: never its secret. */
export function shownCallback(callback: StoredCallback | null | undefined): CallbackShown | null {
  return callback ? { url: callback.url, events: callback.events as CallbackEvent[] } : null;
}
