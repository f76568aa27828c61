import { fromJsonText, toJsonText } from '../../db/json-text';
import type { Models, WebhookTriggerDoc } from '../../db/models';
import { createRunLookups } from '../../db/runs/run-lookups';
import type { StoredCallback } from '../../db/runs/run-documents';
import type { StoredTriggerFields, WebhookTriggerStore } from '../../db/webhook-triggers';
import { NotFoundError, RequestValidationError } from '../../errors';
import type { SecretBox } from '../../secrets/secret-box';
import type { WorkflowService } from '../workflows/workflows.service';
import { type CallbackService, shownCallback } from '../callbacks/callbacks.service';
import { DEFAULT_TOLERANCE_SECONDS } from './hook-timestamped-signature';
import { hookPath, mintToken, secretSealName, tokenSealName } from './hook-token';
import type { TriggerInput, TriggerResponse } from './webhooks.schemas';

/** How many of a trigger's runs its answer lists. */
const RECENT_RUNS = 5;

export const triggerNotFound = () => new NotFoundError('Trigger not found', 'TRIGGER_NOT_FOUND');

export interface TriggerServiceDeps {
  models: Models;
  store: WebhookTriggerStore;
  workflows: Pick<WorkflowService, 'load'>;
  box: SecretBox;
  /** Checks and seals the callback its runs get, as start_run's. */
  callbacks: Pick<CallbackService, 'replace'>;
  apiPrefix: string;
  clock?: () => Date;
}

/** Webhook triggers as the API's clients manage them: the secret sealed on the way in, never out. */
export function createWebhookTriggerService({
  models,
  store,
  workflows,
  box,
  callbacks,
  apiPrefix,
  clock = () => new Date(),
}: TriggerServiceDeps) {
  async function load(id: string): Promise<WebhookTriggerDoc> {
    const doc = await store.byId(id);
    if (!doc) throw triggerNotFound();
    return doc;
  }

  /** What a PUT that leaves `secret` or `callback` out keeps of them (nothing, on create). */
  interface Kept {
    secretSealed: string | null;
    callback: StoredCallback | null;
  }
  const nothingKept: Kept = { secretSealed: null, callback: null };

  /** The stored fields of a request. */
  function storedFields(
    triggerId: string,
    body: TriggerInput,
    kept: Kept,
    callback: StoredCallback | null,
  ): StoredTriggerFields {
    const keptSecret = kept.secretSealed;
    const secretSealed =
      body.secret === undefined
        ? keptSecret
        : body.secret === null
          ? null
          : box.seal(secretSealName(triggerId), body.secret);
    if (body.signature && secretSealed === null)
      throw new RequestValidationError([
        {
          type: 'missing',
          loc: ['body', 'secret'],
          msg: 'A signature needs a secret to check it with',
          input: null,
        },
      ]);
    return {
      name: body.name,
      inputMapping: body.input_mapping ? toJsonText(body.input_mapping) : null,
      signature: body.signature && {
        scheme: body.signature.scheme,
        header: body.signature.header,
        algorithm: body.signature.algorithm,
        prefix: body.signature.prefix,
        tolerance_seconds:
          body.signature.scheme === 'stripe' ? (body.signature.tolerance_seconds ?? DEFAULT_TOLERANCE_SECONDS) : null,
      },
      secretSealed,
      dedupeHeader: body.dedupe_header,
      respond: body.respond,
      maxBodyBytes: body.max_body_bytes,
      ratePerSecond: body.rate_per_second,
      callback,
    };
  }

  async function recentRuns(id: string) {
    const runs = await createRunLookups(models).recentOfTrigger(id, RECENT_RUNS);
    return runs.map((r) => ({ run_id: r._id, status: r.status, start_time: r.start_time.toISOString() }));
  }

  async function toResponse(doc: WebhookTriggerDoc): Promise<TriggerResponse> {
    const token = box.open(tokenSealName(doc._id), doc.token_sealed);
    return {
      id: doc._id,
      workflow_id: doc.workflow_id,
      name: doc.name,
      url: hookPath(apiPrefix, token),
      input_mapping: fromJsonText<Record<string, string>>(doc.input_mapping ?? null) ?? null,
      signature: doc.signature
        ? {
            scheme: doc.signature.scheme ?? 'hmac',
            header: doc.signature.header,
            algorithm: doc.signature.algorithm,
            prefix: doc.signature.prefix ?? '',
            tolerance_seconds: doc.signature.tolerance_seconds ?? null,
          }
        : null,
      has_secret: doc.secret_sealed !== null && doc.secret_sealed !== undefined,
      dedupe_header: doc.dedupe_header ?? null,
      respond: doc.respond,
      max_body_bytes: doc.max_body_bytes,
      rate_per_second: doc.rate_per_second,
      callback: shownCallback(doc.callback),
      created_at: doc.created_at.toISOString(),
      updated_at: doc.updated_at.toISOString(),
      recent_runs: await recentRuns(doc._id),
    };
  }

  return {
    async create(workflowId: string, body: TriggerInput): Promise<TriggerResponse> {
      await workflows.load(workflowId);
      const callback = await callbacks.replace(body.callback, null);
      const doc = await store.create(
        workflowId,
        (id) => ({ ...storedFields(id, body, nothingKept, callback), token: mintToken(box, id) }),
        clock(),
      );
      return toResponse(doc);
    },
    async get(id: string): Promise<TriggerResponse> {
      return toResponse(await load(id));
    },
    async listOfWorkflow(workflowId: string): Promise<TriggerResponse[]> {
      await workflows.load(workflowId);
      return Promise.all((await store.listOfWorkflow(workflowId)).map(toResponse));
    },
    async update(id: string, body: TriggerInput): Promise<TriggerResponse> {
      const doc = await load(id);
      const kept: Kept = { secretSealed: doc.secret_sealed ?? null, callback: doc.callback ?? null };
      await store.update(
        id,
        storedFields(id, body, kept, await callbacks.replace(body.callback, kept.callback)),
        clock(),
      );
      return toResponse(await load(id));
    },
    async rotate(id: string): Promise<TriggerResponse> {
      await load(id);
      await store.rotate(id, mintToken(box, id), clock());
      return toResponse(await load(id));
    },
    async remove(id: string): Promise<void> {
      if (!(await store.remove(id))) throw triggerNotFound();
    },
    /** A deleted workflow's triggers go with it: their hooks answer 404 from then on. */
    removeOfWorkflow: (workflowId: string) => store.removeOfWorkflow(workflowId),
  };
}

export type WebhookTriggerService = ReturnType<typeof createWebhookTriggerService>;
