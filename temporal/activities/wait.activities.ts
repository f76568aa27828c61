import { ApplicationFailure } from '@temporalio/activity';
import { FailureType } from '../../src/contracts/failures';
import type { CallbackExpiryInput, WaitUntilInput } from '../../src/contracts/inbound-callback-contract';
import { type CallbackEnd, createInboundCallbacks } from '../../src/db/inbound-callbacks';
import type { Models } from '../../src/db/models';
import type { Values } from '../../src/db/values';
import { NodeExecutionError } from '../../src/nodes/errors';
import { renderTemplate } from '../../src/nodes/templates';
import { WAIT_MAX_SECONDS } from '../../src/nodes/waits/wait-limits';

/** An ISO 8601 date-time with its zone: a time without one would mean the worker's zone. */
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** The activities of WaitNode and WaitForCallbackNode: what their waits need outside workflow code. */
export function createWaitActivities(deps: { models: Models; values: Values }) {
  const callbacks = createInboundCallbacks(deps.models);
  return {
    /**
     * A WaitNode's `until`, rendered over its input by the one renderer: the wake-up time (ISO).
     * A time past the wait's bound, or no time at all, fails the node, naming what it got.
     */
    async waitUntilOf({ node, input }: WaitUntilInput): Promise<{ wakeAt: string }> {
      try {
        const template = typeof node.config.until === 'string' ? node.config.until : '';
        const text = (await renderTemplate(template, await deps.values.resolve(input), 'until')).trim();
        if (!ISO_WITH_ZONE.test(text) || Number.isNaN(Date.parse(text)))
          throw new NodeExecutionError(
            `until rendered '${text.slice(0, 100)}', not an ISO 8601 time with its zone (e.g. 2026-12-03T15:00:00Z)`,
          );
        const at = Date.parse(text);
        if (at - Date.now() > WAIT_MAX_SECONDS * 1000)
          throw new NodeExecutionError(`until ${text} is more than ${WAIT_MAX_SECONDS / 86_400} days ahead`);
        return { wakeAt: new Date(at).toISOString() };
      } catch (err) {
        if (err instanceof NodeExecutionError)
          throw ApplicationFailure.nonRetryable(err.message, FailureType.NodeFailed);
        throw err;
      }
    },

    /** A WaitForCallbackNode's timeout came: claims its callback, unless a call claimed it first (then its body). */
    expireInboundCallback({ runId, nodeId }: CallbackExpiryInput): Promise<CallbackEnd> {
      return callbacks.expire(runId, nodeId);
    },
  };
}

export type WaitActivities = ReturnType<typeof createWaitActivities>;
