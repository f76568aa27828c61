import { z } from '../../zod';
import { CALLBACK_EVENTS, FINAL_CALLBACK_EVENTS } from '../../engine/callback-events';
import { CALLBACK_DELIVERY_STATUSES } from '../../db/models/callback-delivery.model';

const httpUrl = z
  .string()
  .max(2048)
  .refine((v) => URL.canParse(v) && ['http:', 'https:'].includes(new URL(v).protocol), {
    message: 'URL must be an absolute http or https URL',
  });

const SIGNATURE_SCHEME =
  'Each delivery is an HTTP POST of `{"event": <event>, "run": <the run as GET /api/run/{run_id}/ answers it at delivery time>}` ' +
  'with headers `X-Spur-Event` (the event), `X-Spur-Event-Id` (`<run_id>:<event>:<n>`, the same on every retry of a delivery: ' +
  'delivery is at least once, dedupe on it) and `X-Spur-Signature: sha256=<hex HMAC-SHA256 of the raw request body keyed with the secret>`. ' +
  'A 2xx answer ends the delivery; network errors, 5xx and 429 (its Retry-After honoured) are retried with backoff for up to ' +
  'SPUR_CALLBACK_RETRY_HOURS (24 h); any other answer, redirects included (never followed), stops it. Deliveries never hold up or fail the run. ' +
  'The url must be http(s); its host must resolve to public addresses only (loopback, private, link-local and other special-purpose ' +
  'addresses are refused with 422 unless the installation sets SPUR_OUTBOUND_ALLOW_PRIVATE), checked again at delivery, and the connection goes to the address checked.';

/** The optional `callback` of run, start_run and start_batch_run (beyond PySpur). */
export const CallbackRequest = z
  .object({
    url: httpUrl.openapi({
      description: 'Where events are posted (http or https)',
      example: 'https://example.com/hooks/spur',
    }),
    events: z
      .array(z.enum(CALLBACK_EVENTS))
      .min(1)
      .max(CALLBACK_EVENTS.length * 2)
      .default([...FINAL_CALLBACK_EVENTS])
      .transform((events) => [...new Set(events)])
      .openapi({
        description:
          'Events to deliver; default: the final one (run.completed, run.failed or run.canceled). run.paused: each human pause.',
      }),
    secret: z
      .string()
      .min(8)
      .max(1024)
      .openapi({ description: 'Key of the HMAC-SHA256 signature; stored encrypted, never shown again' }),
  })
  // A field Spur does not know (a misspelt `events`, per-callback headers) is a 422, not ignored.
  .strict()
  .openapi('RunCallback', { description: `Beyond PySpur: be told of the run's events. ${SIGNATURE_SCHEME}` });
export type CallbackInput = z.output<typeof CallbackRequest>;

/** A stored callback as answers show it: never its secret. */
export const CallbackShown = z.object({ url: z.string(), events: z.array(z.enum(CALLBACK_EVENTS)) });
export type CallbackShown = z.output<typeof CallbackShown>;

export const CallbackAttemptResponse = z.object({
  attempt: z.number().int().openapi({ description: '1 for the first try' }),
  time: z.string(),
  status_code: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "The receiver's status; null when none came (network error, refused address)" }),
  error: z.string().nullable(),
  duration_ms: z.number().nullable(),
});

export const CallbackDeliveryResponse = z.object({
  id: z.string().openapi({ description: 'The X-Spur-Event-Id of the delivery' }),
  event: z.enum(CALLBACK_EVENTS),
  url: z.string(),
  status: z
    .enum(CALLBACK_DELIVERY_STATUSES)
    .openapi({ description: 'pending while attempts go on; delivered (2xx); failed (refused, or given up)' }),
  reason: z.string().nullable().openapi({ description: 'Why a failed delivery stopped' }),
  created_at: z.string(),
  updated_at: z.string(),
  attempts: z.array(CallbackAttemptResponse),
});

export const RunCallbacksResponse = z
  .object({
    run_id: z.string(),
    callback: CallbackShown.nullable().openapi({
      description: "The run's callback (its secret is never shown); null: none",
    }),
    deliveries: z.array(CallbackDeliveryResponse),
  })
  .openapi('RunCallbacks');
export type RunCallbacksResponse = z.output<typeof RunCallbacksResponse>;

export { SIGNATURE_SCHEME };
