import { DEFAULT_WORKSPACE, workspaceScope } from '../../db/workspace-scope';
import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { noteAudit } from '../../access/audit-note';
import { fromJsonText } from '../../db/json-text';
import type { RunTrigger } from '../../db/runs/run-documents';
import type { WebhookHits } from '../../db/webhook-hits';
import type { WebhookTriggerDoc } from '../../db/models';
import type { WebhookTriggerStore } from '../../db/webhook-triggers';
import type { WorkflowPauses } from '../../db/workflow-pauses';
import { BadRequestError, NotFoundError, PayloadTooLargeError, RequestValidationError } from '../../errors';
import { toValidationDetails } from '../../http/validation-details';
import { checkRunnable, storedRunDefinition } from '../../runs/inputs';
import type { RunReader } from '../../runs/reader';
import type { SecretBox } from '../../secrets/secret-box';
import type { WorkflowService } from '../workflows/workflows.service';
import { blockingAnswerOf } from '../runs/blocking-answer';
import type { Idempotency } from '../runs/idempotency';
import type { ClientRuns } from '../../runs/client-runs';
import { StartRunRequest, type StartRunInput } from '../runs/runs.schemas';
import type { HookHold } from './hook-hold';
import { mapHookInputs, parseHookBody } from './hook-inputs';
import { rateWindow } from './hook-rate';
import { signatureMatches } from './hook-signature';
import { DEFAULT_TOLERANCE_SECONDS, timestampedSignatureMatches } from './hook-timestamped-signature';
import { secretSealName, tokenHash } from './hook-token';
import { type WebhookStatus, metrics } from '../../metrics/metrics';

export interface HookDeliveryDeps {
  store: WebhookTriggerStore;
  hits: WebhookHits;
  box: SecretBox;
  workflows: Pick<WorkflowService, 'load'>;
  clientRuns: ClientRuns;
  reader: RunReader;
  idempotency: Idempotency;
  /** Starts a run whose first delivery died between recording and starting it (as keyed runs are). */
  recoverRun: (runId: string) => Promise<{ id: string }>;
  /** A paused workflow's deliveries are held (or refused) instead of starting a run. */
  pauses: Pick<WorkflowPauses, 'of'>;
  hold: HookHold;
  clock?: () => number;
}

const toleranceOf = (trigger: WebhookTriggerDoc) => trigger.signature?.tolerance_seconds ?? DEFAULT_TOLERANCE_SECONDS;

/** One answer for an unknown, rotated or malformed token: nothing tells them apart. */
const unknownHook = () => new NotFoundError('Not Found', 'HOOK_NOT_FOUND');

/** A delivery id is stored and echoed like an Idempotency-Key: printable ASCII, at most 255 characters. */
const DELIVERY_ID = /^[\x21-\x7e]([\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/**
 * `POST /hooks/{token}`: the token finds the trigger (by its hash, in the database every time, so a
 * rotation holds at once in every process), then in this order: the rate (429), the body read
 * within its limit (413), the signature over the raw bytes (and, stripe's, its timestamp within
 * the tolerance: 401), the inputs (422), and the run, deduplicated by the delivery header through
 * the Idempotency-Key machinery; while the workflow is paused, the delivery is held instead
 * (hook-hold.ts), or refused (409) by a pause that holds none.
 */
export function createHookDelivery(deps: HookDeliveryDeps) {
  const { store, hits, box, clientRuns, idempotency } = deps;
  const clock = deps.clock ?? Date.now;
  const blockingAnswer = blockingAnswerOf(deps.reader);

  /** Whether the trigger may take another request now; when not, 429 with Retry-After is set on ctx. */
  async function withinRate(ctx: Context, trigger: WebhookTriggerDoc): Promise<boolean> {
    const now = clock();
    const window = rateWindow(trigger.rate_per_second, now);
    if (await hits.admit(trigger._id, window.start, window.windowMs, window.allowed, now)) return true;
    ctx.status = 429;
    ctx.set('Retry-After', String(window.retryAfterSeconds));
    ctx.body = {
      detail: `Too many requests for trigger ${trigger._id}: at most ${trigger.rate_per_second} per second; retry after ${window.retryAfterSeconds} s`,
    };
    return false;
  }

  async function readBody(ctx: Context, limit: number): Promise<Buffer> {
    try {
      return await getRawBody(ctx.req, { limit, length: ctx.request.length });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large')
        throw new PayloadTooLargeError(`Request body exceeds ${limit} bytes, this trigger's max_body_bytes`);
      throw new BadRequestError(`Could not read the request body: ${(err as Error).message}`);
    }
  }

  function signed(ctx: Context, trigger: WebhookTriggerDoc, raw: Buffer): boolean {
    const { signature, secret_sealed: sealed } = trigger;
    if (!signature) return true;
    if (!sealed) return false; // the API refuses a signature without a secret; a stored one is closed, not open
    const presented = ctx.get(signature.header);
    if (!presented) return false;
    const secret = box.open(secretSealName(trigger._id), sealed);
    if (signature.scheme === 'stripe')
      return timestampedSignatureMatches(secret, raw, presented, toleranceOf(trigger), clock());
    return signatureMatches({ algorithm: signature.algorithm, prefix: signature.prefix ?? '' }, secret, raw, presented);
  }

  /** The run request the body makes: the InputNode's fields from the body, checked as a client's would be. */
  async function runRequest(ctx: Context, trigger: WebhookTriggerDoc, raw: Buffer): Promise<StartRunInput> {
    const body = parseHookBody(raw, ctx.request.is('application/json', 'application/x-www-form-urlencoded'));
    const workflow = await deps.workflows.load(trigger.workflow_id);
    const inputNode = checkRunnable(storedRunDefinition(workflow.definition));
    const schema = inputNode.config.output_schema;
    const fields = schema && typeof schema === 'object' ? Object.keys(schema) : ['input_1'];
    const mapping = fromJsonText<Record<string, string>>(trigger.input_mapping ?? null) ?? null;
    const request = { initial_inputs: { [inputNode.id]: mapHookInputs(body, mapping, fields) } };
    const parsed = StartRunRequest.safeParse(request);
    if (!parsed.success) throw new RequestValidationError(toValidationDetails(parsed.error.issues, 'body', request));
    return parsed.data;
  }

  function deliveryIdOf(ctx: Context, trigger: WebhookTriggerDoc): string | null {
    if (!trigger.dedupe_header) return null;
    const value = ctx.get(trigger.dedupe_header);
    if (value === '') return null;
    if (!DELIVERY_ID.test(value))
      throw new RequestValidationError([
        {
          type: 'value_error',
          loc: ['header', trigger.dedupe_header.toLowerCase()],
          msg: 'A delivery id must be printable ASCII of at most 255 characters, without leading or trailing spaces',
          input: value.slice(0, 300),
        },
      ]);
    return value;
  }

  return async function deliver(ctx: Context, token: string): Promise<unknown> {
    // What became of it, as each step below learns (spur_webhook_deliveries_total). Answered
    // without `perform` running: a redelivery, replayed; anything thrown: rejected.
    const outcome: { status: WebhookStatus } = { status: 'replayed' };
    try {
      // The token is the only credential: it names the trigger, and the trigger its workspace.
      const trigger = await workspaceScope.unscoped(() => store.byTokenHash(tokenHash(token)));
      if (!trigger) throw unknownHook();
      return await workspaceScope.run(trigger.workspace_id ?? DEFAULT_WORKSPACE, () =>
        deliverTo(ctx, trigger, outcome),
      );
    } catch (err) {
      outcome.status = 'rejected';
      throw err;
    } finally {
      metrics.webhookDeliveries.inc({ status: outcome.status });
    }
  };

  async function deliverTo(
    ctx: Context,
    trigger: WebhookTriggerDoc,
    outcome: { status: WebhookStatus },
  ): Promise<unknown> {
    // The trail names the trigger, never the token that found it.
    noteAudit(ctx.state, {
      action: 'hook.deliver',
      target: { type: 'trigger', id: trigger._id },
      actor: { via: 'webhook' },
    });
    if (!(await withinRate(ctx, trigger))) {
      outcome.status = 'rate_limited';
      return undefined;
    }
    const raw = await readBody(ctx, trigger.max_body_bytes);
    if (!signed(ctx, trigger, raw)) {
      outcome.status = 'unauthorized';
      ctx.status = 401;
      const stale = trigger.signature?.scheme === 'stripe' ? `, or its t over ${toleranceOf(trigger)} s from now` : '';
      ctx.body = { detail: `Signature missing or wrong${stale} (header ${trigger.signature?.header})` };
      return undefined;
    }
    const request = await runRequest(ctx, trigger, raw);
    const deliveryId = deliveryIdOf(ctx, trigger);
    const runTrigger: RunTrigger = { kind: 'webhook', id: trigger._id, deliveryId };
    const origin = { trigger: runTrigger, callback: trigger.callback ?? null };
    const workflowId = trigger.workflow_id;
    const result = trigger.respond === 'result';
    const pause = await deps.pauses.of(workflowId);
    return idempotency.keyedBy(ctx, deliveryId ?? '', {
      route: 'webhook',
      target: trigger._id,
      anyCaller: true,
      // A redelivery is the same delivery whatever its body: it starts nothing.
      request: trigger._id,
      perform: async (claim) => {
        // keyedBy has replayed a delivery id whose run started before the pause: any other is held.
        if (pause) {
          const held = await deps.hold(ctx, {
            trigger,
            pause,
            deliveryId,
            initialInputs: request.initial_inputs ?? {},
          });
          outcome.status = held ? 'held' : 'rate_limited';
          return held;
        }
        outcome.status = 'started';
        if (result) {
          // 200 with the outputs (blockingAnswer makes it 202 for a run still going), as /wf/{id}/run/ answers.
          ctx.status = 200;
          return blockingAnswer(
            await clientRuns.recordAndAwait('webhook', workflowId, request, { ...origin, claim }),
            ctx,
          );
        }
        const run = await clientRuns.recordAndLaunch('webhook', workflowId, request, { ...origin, claim });
        ctx.status = 202;
        return { run_id: run.id };
      },
      ...(result
        ? {
            replay: async (runId: string) => {
              ctx.status = 200;
              return blockingAnswer(await clientRuns.awaitOutcome(runId), ctx);
            },
          }
        : {}),
      recover: async (runId) => ({ run_id: (await deps.recoverRun(runId)).id }),
    });
  }
}

export type HookDelivery = ReturnType<typeof createHookDelivery>;
