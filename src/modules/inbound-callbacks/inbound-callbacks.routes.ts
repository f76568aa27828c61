import { JSON_TYPE } from '../../http/body-types';
import { defineRoute, type MountableRoute } from '../../http/route';
import { z } from '../../zod';
import { CallbackAccepted, CallbackBody, CallbackTokenParams } from './callback-answer';
import type { InboundCallbackDelivery } from './inbound-callbacks.service';

/** The URL a WaitForCallbackNode waits on (not the run callbacks Spur posts: src/modules/callbacks). */
export function inboundCallbackRoutes(deliver: InboundCallbackDelivery): MountableRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/callbacks/{token}',
      permission: 'anyone',
      audit: { action: 'callback.deliver', target: 'run', secretPath: true },
      summary: "Resume a run's WaitForCallbackNode (no API key: the URL's token is the credential)",
      description:
        "The JSON object posted becomes the node's output. Usable once: a second call, or a call after the node's timeout or the run's end, is 410. " +
        "With the node's `secret`, `X-Spur-Signature: sha256=<hex HMAC-SHA256 of the raw body>` is required (401 otherwise, nothing changes). " +
        'An unknown token is 404; a body over SPUR_INBOUND_CALLBACK_MAX_BYTES is 413; a body that is not a JSON object is 422.',
      tags: ['callbacks'],
      params: CallbackTokenParams,
      rawBody: { contentTypes: [JSON_TYPE], schema: CallbackBody, description: 'Any JSON object' },
      response: CallbackAccepted,
      otherAnswers: {
        410: {
          description: 'The callback was used, timed out, or its run has ended',
          schema: z.object({ detail: z.string() }),
        },
      },
      errors: [401, 404, 413, 415, 422],
      handler: async ({ params }, ctx) => {
        const answer = await deliver(ctx, params.token);
        ctx.status = answer.status;
        return answer.body;
      },
    }),
  ];
}
