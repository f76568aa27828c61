import { z } from '../../zod';
import { CallbackRequest, CallbackShown } from '../callbacks/callbacks.schemas';
import { WorkflowIdParams } from '../workflows/workflows.schemas';
import { DEFAULT_TOLERANCE_SECONDS } from './hook-timestamped-signature';

export { WorkflowIdParams };

/** A body up to this size is read unless the trigger says otherwise; no trigger may read more. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
export const MAX_BODY_BYTES_CAP = 10 * 1024 * 1024;
export const DEFAULT_RATE_PER_SECOND = 10;

/** An HTTP header name (RFC 9110 token). */
const HeaderName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name');

/** RFC 6901: empty (the whole body) or `/`-separated tokens where `~` is only `~0` or `~1`. */
const JsonPointer = z
  .string()
  .max(1000)
  .regex(/^(\/([^~]|~[01])*)*$/, "must be a JSON pointer: '' or '/a/b', with '~0' for '~' and '~1' for '/'");

const SIGNATURE_SCHEMES = ['hmac', 'stripe'] as const;
const SIGNATURE_ALGORITHMS = ['hmac-sha256', 'hmac-sha1'] as const;
/** A secret shorter than this is refused: an HMAC is only as hard to forge as its key is to guess. */
export const MIN_SECRET_BYTES = 16;
const MAX_TOLERANCE_SECONDS = 3600;

export const WebhookSignature = z
  .object({
    scheme: z
      .enum(SIGNATURE_SCHEMES)
      .default('hmac')
      .openapi({
        description:
          '`hmac`: the header holds `<prefix><hex HMAC of the raw body>` (GitHub). `stripe`: it holds ' +
          '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` and a delivery whose t is over ' +
          '`tolerance_seconds` from now (either way) is refused (401): a recorded delivery stops working once ' +
          'the tolerance has passed (`hmac` signs the body only, so a recorded delivery can be sent again)',
      }),
    header: HeaderName.openapi({ example: 'X-Hub-Signature-256' }),
    algorithm: z
      .enum(SIGNATURE_ALGORITHMS)
      .default('hmac-sha256')
      .openapi({ description: '`stripe` signs with hmac-sha256 only' }),
    prefix: z
      .string()
      .max(50)
      .default('')
      .openapi({ description: 'Before the lower-case hex HMAC in the header (`hmac` only)', example: 'sha256=' }),
    tolerance_seconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_TOLERANCE_SECONDS)
      .optional()
      .openapi({ description: `\`stripe\` only: how far t may be from now (default ${DEFAULT_TOLERANCE_SECONDS})` }),
  })
  .strict()
  .superRefine((s, ctx) => {
    const refuse = (field: string, message: string) => ctx.addIssue({ code: 'custom', path: [field], message });
    if (s.scheme === 'stripe') {
      if (s.algorithm !== 'hmac-sha256') refuse('algorithm', 'the stripe scheme signs with hmac-sha256');
      if (s.prefix !== '') refuse('prefix', 'the stripe scheme has no prefix');
    } else if (s.tolerance_seconds !== undefined) refuse('tolerance_seconds', 'only the stripe scheme has a tolerance');
  })
  .openapi('WebhookSignature');
export type SignatureInput = z.output<typeof WebhookSignature>;

/** A trigger's signature as answers show it: every field set (tolerance_seconds null for `hmac`). */
export const WebhookSignatureShown = z
  .object({
    scheme: z.enum(SIGNATURE_SCHEMES),
    header: z.string(),
    algorithm: z.enum(SIGNATURE_ALGORITHMS),
    prefix: z.string(),
    tolerance_seconds: z.number().int().nullable(),
  })
  .openapi('WebhookSignatureShown');

export const TriggerRequest = z
  .object({
    name: z.string().min(1).max(200),
    input_mapping: z
      .record(z.string().min(1).max(200), JsonPointer)
      .nullable()
      .default(null)
      .openapi({
        description:
          "The InputNode's fields, each from a JSON pointer into the request body (`/pull_request/title`); " +
          'none: the whole body is the first input field',
      }),
    signature: WebhookSignature.nullable().default(null),
    secret: z
      .string()
      .max(1000)
      .refine((v) => Buffer.byteLength(v, 'utf8') >= MIN_SECRET_BYTES, `must be at least ${MIN_SECRET_BYTES} bytes`)
      .nullable()
      .optional()
      .openapi({
        description: `The HMAC secret (at least ${MIN_SECRET_BYTES} bytes), stored sealed and never returned (\`has_secret\`). On PUT, left out keeps the stored one; null removes it. Needed with a signature.`,
      }),
    dedupe_header: HeaderName.nullable().default(null).openapi({
      description:
        'A header naming the delivery (X-GitHub-Delivery): a value seen within 24 h starts nothing and answers the first answer',
    }),
    respond: z.enum(['accepted', 'result']).default('accepted').openapi({
      description:
        '`accepted`: 202 `{run_id}` once the run is recorded; `result`: the outputs, as POST /wf/{id}/run/ answers',
    }),
    max_body_bytes: z.number().int().min(1).max(MAX_BODY_BYTES_CAP).default(DEFAULT_MAX_BODY_BYTES),
    rate_per_second: z.number().positive().max(1000).default(DEFAULT_RATE_PER_SECOND).openapi({
      description: 'Requests let through per second, across all api processes (below 1: one per 1/rate seconds)',
    }),
    callback: CallbackRequest.nullable().optional().openapi({
      description:
        "Every run the trigger starts posts its events here, as a start_run callback does (the secret is stored sealed and never shown). On PUT, left out keeps the trigger's callback; null removes it.",
    }),
  })
  // Unknown fields are refused (422 naming them), not ignored: a misspelt field would silently not apply.
  .strict()
  .openapi('TriggerRequest');
export type TriggerInput = z.output<typeof TriggerRequest>;

export const TriggerIdParams = z.object({ trigger_id: z.string().min(1).max(200) });

export const TriggerResponse = z
  .object({
    id: z.string().openapi({ example: 'TR1' }),
    workflow_id: z.string(),
    name: z.string(),
    url: z.string().nullable().openapi({
      description: 'Where to POST: the token in it is the credential (null to a caller who may not build)',
      example: '/api/hooks/…',
    }),
    input_mapping: z.record(z.string(), z.string()).nullable(),
    signature: WebhookSignatureShown.nullable(),
    has_secret: z.boolean(),
    dedupe_header: z.string().nullable(),
    respond: z.enum(['accepted', 'result']),
    max_body_bytes: z.number().int(),
    rate_per_second: z.number(),
    callback: CallbackShown.nullable().openapi({ description: "The runs' callback, without its secret" }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    recent_runs: z
      .array(z.object({ run_id: z.string(), status: z.string(), start_time: z.iso.datetime() }))
      .openapi({ description: 'The last runs the trigger started, newest first' }),
  })
  .openapi('TriggerResponse');
export type TriggerResponse = z.input<typeof TriggerResponse>;

/** Any one path segment: a malformed token is answered as an unknown one (404), never 422. */
export const HookParams = z.object({ token: z.string() });

export const HookBody = z
  .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
  .openapi('WebhookBody', { description: 'Any JSON, or form fields' });

export const HookAccepted = z.object({ run_id: z.string() }).openapi('WebhookAccepted');

export const HookHeld = z
  .object({
    held: z.literal(true),
    detail: z.string().openapi({ description: 'Which pause holds it; it starts when the workflow is resumed' }),
  })
  .openapi('WebhookHeld');
export type HookHeld = z.output<typeof HookHeld>;
