import { callerOf } from '../../access/caller';
import { roleAllows } from '../../access/permissions';
import { z } from '../../zod';
import { FORM_TYPE, JSON_TYPE } from '../../http/body-types';
import { defineRoute, type MountableRoute } from '../../http/route';
import { REPLAY_RESPONSE_HEADERS } from '../runs/idempotency';
import { RunOutputsById, RunStillGoing } from '../runs/runs.schemas';
import type { HookDelivery } from './hook-delivery';
import type { WebhookTriggerService } from './webhook-triggers.service';
import {
  HookAccepted,
  HookBody,
  HookHeld,
  HookParams,
  TriggerIdParams,
  TriggerRequest,
  TriggerResponse,
  WorkflowIdParams,
} from './webhooks.schemas';

const tags = ['webhooks'];

/**
 * A trigger's URL holds its token, which starts runs for whoever has it: a caller who may not
 * build (manage triggers) reads the trigger without it, or reading would let a viewer start runs.
 */
function asSeenBy<T extends { url: string | null }>(state: unknown, trigger: T): T {
  const caller = callerOf(state);
  return caller && roleAllows(caller.role, 'build') ? trigger : { ...trigger, url: null };
}

export function webhookRoutes({
  triggers,
  deliver,
}: {
  triggers: WebhookTriggerService;
  deliver: HookDelivery;
}): MountableRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/wf/{workflow_id}/triggers/',
      permission: 'build',
      summary: 'Create a webhook trigger: a secret URL that starts a run of the workflow',
      tags,
      params: WorkflowIdParams,
      body: TriggerRequest,
      response: TriggerResponse,
      errors: [404],
      handler: ({ params, body }) => triggers.create(params.workflow_id, body),
    }),
    defineRoute({
      method: 'get',
      path: '/wf/{workflow_id}/triggers/',
      summary: "A workflow's webhook triggers",
      tags,
      params: WorkflowIdParams,
      response: z.array(TriggerResponse),
      errors: [404],
      handler: async ({ params }, ctx) =>
        (await triggers.listOfWorkflow(params.workflow_id)).map((t) => asSeenBy(ctx.state, t)),
    }),
    defineRoute({
      method: 'get',
      path: '/triggers/{trigger_id}/',
      summary: 'A webhook trigger (never its secret) and its recent runs',
      tags,
      params: TriggerIdParams,
      response: TriggerResponse,
      errors: [404],
      handler: async ({ params }, ctx) => asSeenBy(ctx.state, await triggers.get(params.trigger_id)),
    }),
    defineRoute({
      method: 'put',
      path: '/triggers/{trigger_id}/',
      permission: 'build',
      summary: 'Replace a webhook trigger (its URL stays; a left-out secret is kept)',
      tags,
      params: TriggerIdParams,
      body: TriggerRequest,
      response: TriggerResponse,
      errors: [404],
      handler: ({ params, body }) => triggers.update(params.trigger_id, body),
    }),
    defineRoute({
      method: 'delete',
      path: '/triggers/{trigger_id}/',
      permission: 'build',
      summary: 'Delete a webhook trigger: its URL answers 404 from then on',
      tags,
      params: TriggerIdParams,
      status: 204,
      response: null,
      errors: [404],
      handler: async ({ params }) => {
        await triggers.remove(params.trigger_id);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/triggers/{trigger_id}/rotate/',
      permission: 'build',
      summary: 'Give a webhook trigger a new URL: the old one answers 404 at once, on every api process',
      tags,
      params: TriggerIdParams,
      response: TriggerResponse,
      errors: [404],
      handler: ({ params }) => triggers.rotate(params.trigger_id),
    }),
    defineRoute({
      carriesValues: true,
      method: 'post',
      path: '/hooks/{token}',
      permission: 'anyone',
      audit: { action: 'hook.deliver', target: 'trigger', secretPath: true },
      summary: "Start a run from a webhook (no API key: the URL's token is the credential)",
      description:
        "The trigger's signature header, when it has one, must hold the HMAC of the raw body (401 otherwise, and no run). " +
        "The body's values go into the InputNode's fields by the trigger's input_mapping. Answers 202 `{run_id}` once the run " +
        "is recorded, or with `respond: result` 200 and the outputs keyed by node id, as POST /wf/{id}/run/ answers. A delivery id (the trigger's " +
        'dedupe_header) seen within 24 h starts nothing and answers the first answer with Idempotent-Replayed: true. ' +
        'While the workflow is paused the delivery is held (202 `{held, detail}`) and starts when it is resumed, or refused ' +
        '(409) by a pause that holds no webhooks; past the held deliveries a workflow keeps, 429 with Retry-After.',
      tags,
      params: HookParams,
      rawBody: {
        contentTypes: [JSON_TYPE, FORM_TYPE],
        schema: HookBody,
        description: "Any JSON, or form fields; at most the trigger's max_body_bytes",
      },
      status: 202,
      // `{run_id}` (respond: accepted), a `respond: result` run still going past the blocking wait, or held.
      response: z.union([HookAccepted, RunStillGoing, HookHeld]),
      responseHeaders: REPLAY_RESPONSE_HEADERS,
      otherAnswers: {
        200: {
          description:
            'respond: result: the outputs keyed by node id, as POST /wf/{id}/run/ answers (past the blocking wait, 202 with the run id, its status and where to poll)',
          schema: RunOutputsById,
        },
      },
      errors: [401, 404, 409, 413, 415, 429],
      handler: ({ params }, ctx) => deliver(ctx, params.token),
    }),
  ];
}
