import { workspaceScope } from '../../db/workspace-scope';
import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { HeldDeliveries } from '../../db/held-deliveries';
import { keyRecordId, requestHash } from '../../db/idempotency-keys';
import type { WebhookTriggerDoc } from '../../db/models';
import { WorkflowPausedError, describePause, type WorkflowPause } from '../../db/workflow-pauses';
import { REPLAYED_HEADER } from '../runs/idempotency';
import type { HookHeld } from './webhooks.schemas';

/** Past the most deliveries a paused workflow holds, a sender is asked to come back this much later (429). */
const FULL_RETRY_AFTER_SECONDS = 60;

/** A delivery that passed every check (rate, size, signature, inputs) and found its workflow paused. */
export interface PausedDelivery {
  trigger: WebhookTriggerDoc;
  pause: WorkflowPause;
  deliveryId: string | null;
  initialInputs: Record<string, Record<string, unknown>>;
}

/**
 * A delivery to a paused workflow: refused (409) when the pause does not hold webhooks, else kept
 * durably with its run's inputs (202) until the resume starts it. Its run will claim the
 * idempotency record a delivery id would have (the same scope and request as hook-delivery.ts
 * keys it by), so a redelivery after the release replays that run and one held twice is held once;
 * a delivery without an id gets a record of its own. At most `cap` (SPUR_WEBHOOK_MAX_HELD) are held.
 */
export function createHookHold(held: HeldDeliveries, cap: number) {
  return async function holdOrRefuse(ctx: Context, d: PausedDelivery): Promise<HookHeld | undefined> {
    const workflowId = d.trigger.workflow_id;
    if (!d.pause.holdWebhooks) throw new WorkflowPausedError(workflowId, d.pause);
    if ((await held.count(workflowId)) >= cap) {
      ctx.status = 429;
      ctx.set('Retry-After', String(FULL_RETRY_AFTER_SECONDS));
      ctx.body = {
        detail: `Workflow ${workflowId} is ${describePause(d.pause)} and holds ${cap} deliveries, the most it holds; retry after ${FULL_RETRY_AFTER_SECONDS} s`,
      };
      return undefined;
    }
    const keyScope = d.deliveryId
      ? { route: 'webhook', target: d.trigger._id, key: d.deliveryId }
      : { route: 'held_delivery', target: d.trigger._id, key: randomUUID() };
    const first = await held.hold({
      // As the webhook route scopes a delivery's key: no caller, the trigger's workspace (this request's).
      id: keyRecordId({ principal: null, workspace: workspaceScope.current(), ...keyScope }),
      workflowId,
      triggerId: d.trigger._id,
      deliveryId: d.deliveryId,
      keyScope,
      bodyHash: requestHash(d.trigger._id),
      initialInputs: d.initialInputs,
      callback: d.trigger.callback ?? null,
      respond: d.trigger.respond === 'result' ? 'result' : 'accepted',
    });
    ctx.status = 202;
    if (!first) ctx.set(REPLAYED_HEADER, 'true');
    return {
      held: true,
      detail: `Workflow ${workflowId} is ${describePause(d.pause)}: the delivery is held and starts when the workflow is resumed`,
    };
  };
}

export type HookHold = ReturnType<typeof createHookHold>;
