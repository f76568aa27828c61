import type Router from '@koa/router';
import type { OpenAPIRegistry, ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import { type AuditNaming, type AuditOverride, auditNamingOf } from '../access/audit-actions';
import type { Permission } from '../access/permissions';
import { RequestValidationError } from '../errors';
import { NO_BODY, readJsonBody } from './json-body';
import { type RequestPart, toValidationDetails } from './validation-details';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A permission of the table (src/access/permissions.ts), or `anyone`: a route whose own credential is in its path (a webhook) or that answers strangers (health). */
export type RoutePermission = Permission | 'anyone';
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteInput<P, Q, B> {
  params: Out<P>;
  query: Out<Q>;
  body: Out<B>;
}

/**
 * One endpoint, described once: the same zod schemas validate the request, type the handler and
 * generate the OpenAPI document. Paths use OpenAPI's `{name}` form.
 */
export interface RouteDef<
  P extends z.ZodObject | undefined,
  Q extends z.ZodObject | undefined,
  B extends z.ZodType | undefined,
> {
  method: Method;
  path: string;
  summary: string;
  /**
   * What the caller's role must allow, checked by the gate before the route reads anything.
   * A reading route defaults to `read`; every other route must name one.
   */
  permission?: RoutePermission;
  /**
   * The audit trail's name for this route's requests, where the one derived from its method and
   * path reads badly (src/access/audit-actions.ts): the action, the target's type, and whether the
   * path's parameter is a credential (never recorded).
   */
  audit?: AuditOverride;
  /** Longer prose for the OpenAPI document. */
  description?: string;
  tags: string[];
  params?: P;
  query?: Q;
  body?: B;
  /** Request headers the route reads (lower-case names): validated (422) and documented. */
  headers?: z.ZodObject;
  /** Headers a success answer may carry (name → meaning), for the OpenAPI document. */
  responseHeaders?: Record<string, string>;
  /** `multipart/form-data` bodies are parsed by `middleware` (multer) before validation. */
  bodyType?: 'application/json' | 'multipart/form-data';
  /**
   * A body the handler reads itself, as bytes (a webhook checks a signature over them): documented
   * here, with the media types the gate lets through, and not read before the handler.
   */
  rawBody?: { contentTypes: readonly string[]; schema: z.ZodType; description: string };
  middleware?: Middleware[];
  status?: number;
  /** Response schema for the OpenAPI document; `null` for an empty body. */
  response: z.ZodType | null | { contentType: string; description: string; schema?: z.ZodType };
  errors?: number[];
  /** Other answers than success and errors, with bodies of their own (documented only). */
  otherAnswers?: Record<number, { description: string; schema: z.ZodType }>;
  /** Run values may be in the result by reference: the body is resolved (streamed) on the way out. */
  carriesValues?: boolean;
  handler: (input: RouteInput<P, Q, B>, ctx: Context) => Promise<unknown> | unknown;
}

export interface RouteLimits {
  maxJsonBytes: number;
  /** Turns a result holding value references into the body (see http/value-body.ts). */
  valueBody?: (ctx: Context, result: unknown) => unknown;
}

export interface MountableRoute {
  method: Method;
  path: string;
  permission: RoutePermission;
  /** How the audit trail names a request to this route; null for a reading route (only a handler's note records one). */
  audit: AuditNaming | null;
  /** The body's media type, when the route reads a body. */
  bodyType?: 'application/json' | 'multipart/form-data';
  /** The media types a route that reads its body itself accepts (RouteDef.rawBody). */
  bodyTypes?: readonly string[];
  mount(router: Router, registry: OpenAPIRegistry, limits: RouteLimits): void;
}

export function defineRoute<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(def: RouteDef<P, Q, B>): MountableRoute {
  const permission = def.permission ?? (def.method === 'get' ? 'read' : undefined);
  if (permission === undefined)
    throw new Error(`${def.method.toUpperCase()} ${def.path} changes state: it must name its permission`);
  const audit = def.method === 'get' ? null : auditNamingOf(def.method, def.path, def.audit);
  return {
    method: def.method,
    path: def.path,
    permission,
    audit,
    ...(def.body ? { bodyType: def.bodyType ?? 'application/json' } : {}),
    ...(def.rawBody ? { bodyTypes: def.rawBody.contentTypes } : {}),
    mount(router, registry, limits) {
      registry.registerPath({
        ...openApiPath(def),
        'x-spur-permission': permission,
        ...(audit ? { 'x-spur-audit': { action: audit.action, target_type: audit.target.type } } : {}),
      });
      const koaPath = koaPathOf(def.path);
      const handle: Middleware = async (ctx) => {
        const params = parsePart(def.params, 'path', ctx.params ?? {});
        const query = parsePart(def.query, 'query', ctx.query);
        parsePart(def.headers, 'header', ctx.headers);
        let body: unknown;
        if (def.body) {
          const raw =
            def.bodyType === 'multipart/form-data'
              ? (ctx.request as { body?: unknown }).body
              : await readJsonBody(ctx, limits.maxJsonBytes);
          body = parsePart(def.body, 'body', raw === NO_BODY ? undefined : raw);
        }
        // Set before the handler runs, so a handler may still choose another status (health: 503).
        ctx.status = def.status ?? 200;
        const result = await def.handler({ params, query, body } as RouteInput<P, Q, B>, ctx);
        if (result !== undefined)
          ctx.body = def.carriesValues && limits.valueBody ? limits.valueBody(ctx, result) : result;
      };
      router[def.method](koaPath, ...(def.middleware ?? []), handle);
    },
  };
}

/** A route path in @koa/router's `:name` form. */
export function koaPathOf(openApiPath: string): string {
  return openApiPath.replace(/\{(\w+)\}/g, ':$1');
}

function parsePart(schema: z.ZodType | undefined, part: RequestPart, raw: unknown): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(raw);
  if (!result.success) {
    if (raw === undefined && part === 'body') {
      throw new RequestValidationError([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
    }
    throw new RequestValidationError(toValidationDetails(result.error.issues, part, raw));
  }
  return result.data;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request cannot be carried out in the current state',
  401: 'Not authenticated (a webhook: its signature is missing or wrong)',
  403: "The caller's role or the thing's rules do not allow this",
  404: 'Unknown identifier',
  409: 'Conflict with an existing resource',
  413: 'Body or upload over the size limit',
  415: 'A body of a media type the route does not read',
  429: 'Too many at once: retry after the Retry-After seconds',
};

function openApiPath<
  P extends z.ZodObject | undefined,
  Q extends z.ZodObject | undefined,
  B extends z.ZodType | undefined,
>(def: RouteDef<P, Q, B>) {
  const responses: Record<number, ResponseConfig> = {};
  const status = def.status ?? 200;
  if (def.response === null) responses[status] = { description: 'No content' };
  else if ('contentType' in def.response) {
    responses[status] = {
      description: def.response.description,
      content: { [def.response.contentType]: { schema: def.response.schema ?? { type: 'string', format: 'binary' } } },
    };
  } else responses[status] = { description: 'Success', content: { 'application/json': { schema: def.response } } };
  const success = responses[status];
  if (def.responseHeaders && success) {
    success.headers = Object.fromEntries(
      Object.entries(def.responseHeaders).map(([name, description]) => [
        name,
        { description, schema: { type: 'string' as const } },
      ]),
    );
  }
  for (const code of def.errors ?? []) {
    responses[code] = {
      description: ERROR_DESCRIPTIONS[code] ?? 'Error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/HTTPError' } } },
    };
  }
  for (const [code, answer] of Object.entries(def.otherAnswers ?? {})) {
    responses[Number(code)] = {
      description: answer.description,
      content: { 'application/json': { schema: answer.schema } },
    };
  }
  if (def.params || def.query || def.body || def.rawBody || def.headers) {
    responses[422] = {
      description: 'Validation Error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/HTTPValidationError' } } },
    };
  }
  return {
    method: def.method,
    path: def.path,
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: def.tags,
    request: {
      ...(def.params ? { params: def.params } : {}),
      ...(def.query ? { query: def.query } : {}),
      ...(def.headers ? { headers: def.headers } : {}),
      ...(def.body
        ? { body: { required: true, content: { [def.bodyType ?? 'application/json']: { schema: def.body } } } }
        : {}),
      ...(def.rawBody
        ? {
            body: {
              required: false,
              description: def.rawBody.description,
              content: Object.fromEntries(def.rawBody.contentTypes.map((t) => [t, { schema: def.rawBody?.schema }])),
            },
          }
        : {}),
    },
    responses,
  };
}
