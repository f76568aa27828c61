import { z } from 'zod';
import { literalText, secretShape } from '../../secret-shape.js';
import { fixedOutputConfig } from '../../base-config.js';
import { credentialHeaderSchema } from '../../credential-headers.js';
import { HTTP_CREDENTIAL_VARIABLES } from './http-credential-names.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/** What the node outputs: the answer's status, headers (lower-cased names), text, and JSON when it parsed. */
export const HttpRequestOutput = z.object({
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
  json: z.unknown().nullable(),
});
export type HttpRequestOutputValue = z.infer<typeof HttpRequestOutput>;

/** Headers the client sets itself, or that would change how the request travels (request smuggling). */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'te', 'upgrade']);

/** Header names that carry credentials: a literal value there is a secret written into the workflow. */
const CREDENTIAL_HEADER = /auth|key|token|secret|password|passwd|cookie|session|signature/i;

const HeaderName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/, 'a header name (an HTTP token, at most 64 characters)')
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'set by the HTTP client itself');

/** A header's value: a template over the node's input, or a stored credential by name. */
const HeaderValue = z.union([z.string().max(8192), credentialHeaderSchema(HTTP_CREDENTIAL_VARIABLES)]);

/** Why a literal header value looks like a secret, or null: checked at save (422 at the header). */
function inlineSecret(name: string, value: string): string | null {
  const shape = secretShape(value);
  if (shape) return shape;
  // `Authorization: Basic …`, `X-Api-Key: 1234…`: any literal credential-sized value under such a name.
  const literal = literalText(value).replace(/^\s*[A-Za-z]+\s+/, '');
  return CREDENTIAL_HEADER.test(name) && literal.trim().length >= 8 ? `${name} carries a literal credential` : null;
}

const Headers = z.record(HeaderName, HeaderValue).superRefine((headers, ctx) => {
  for (const [name, value] of Object.entries(headers)) {
    const why = typeof value === 'string' ? inlineSecret(name, value) : null;
    if (why)
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `looks like an inline secret (${why}): store it in env management as HTTP_API_KEY (with HTTP_API_BASE) and name it here as {"variable": "HTTP_API_KEY", "prefix": "Bearer "}`,
      });
  }
});

/** HTTPRequestNode's own fields; templates render over the node's input. */
export const httpRequestFields = {
  method: z.enum(HTTP_METHODS).default('GET'),
  /** A template; the origin it spells out before its first tag is the one requested (http-request-url.ts). */
  url: z.string().max(8192).default(''),
  /** Query parameters, each value a template, encoded and appended to the url. */
  query: z.record(z.string().min(1).max(256), z.string().max(8192)).default({}),
  headers: Headers.default({}),
  /** A template, sent as it renders (not for GET or HEAD); JSON text is sent as application/json. */
  body: z.string().max(1_000_000).default(''),
  timeout_seconds: z.number().min(1).max(3600).default(60),
  max_retries: z.number().int().min(0).max(19).default(3),
  /** Statuses outside 2xx taken as answers rather than failures. */
  accept_status: z.array(z.number().int().min(100).max(599)).max(100).default([]),
  response: z.enum(['auto', 'json', 'text']).default('auto'),
};

export const httpRequestConfig = fixedOutputConfig(HttpRequestOutput, httpRequestFields);

/** The checks made when a definition is saved (422 at the field): the same fields, by the same schema. */
export const HttpRequestSaveConfig = z.looseObject(httpRequestFields);
