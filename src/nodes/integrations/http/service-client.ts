import type { z } from 'zod';
import { isUnderBase } from '../../credential-headers.js';
import { NodeExecutionError } from '../../errors.js';
import type { NodeExecutionContext } from '../../types.js';
import { requireSetting } from './settings.js';
import { failureForStatus, networkFailure } from './service-errors.js';
import type { ServiceSpec } from './services.js';

/** What a service client needs of its caller: credentials and base URLs, the outbound client, cancellation. */
export type ServiceContext = Pick<NodeExecutionContext, 'secret' | 'fetch' | 'signal'>;

/** One request's upper bound; Temporal retries a timeout, so it stays below the activity's. */
export const REQUEST_TIMEOUT_MS = 120_000;

export type QueryValue = string | number | boolean | null | undefined;

export interface ServiceRequest {
  method?: 'GET' | 'POST';
  /** Appended to the base URL as it is (`/repos/o/r`); callers encode the segments they insert. */
  path: string;
  query?: Record<string, QueryValue>;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
  /** Error statuses handed back instead of failing the task (GitHub's "not merged" is a 404). */
  accept?: readonly number[];
}

export interface ServiceResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface ServiceClient {
  readonly service: ServiceSpec;
  readonly baseUrl: string;
  request(req: ServiceRequest): Promise<ServiceResponse>;
  /** GET or POST and read the JSON answer with `schema` (an unexpected answer fails the task). */
  get<T>(path: string, schema: z.ZodType<T>, query?: Record<string, QueryValue>): Promise<T>;
  post<T>(path: string, json: unknown, schema: z.ZodType<T>): Promise<T>;
}

export interface ConnectOptions {
  /** Headers that replace the service's credential lookup (a token the node obtained itself). */
  auth?: Record<string, string>;
}

/**
 * A client for one service in one node execution: the base URL from `<SERVICE>_API_BASE` (else the
 * default), the credential from env management (a missing one fails the task naming it), the
 * activity's cancellation on every call, and error answers mapped onto task failures.
 */
export async function connect(
  ctx: ServiceContext,
  service: ServiceSpec,
  options: ConnectOptions = {},
): Promise<ServiceClient> {
  const auth = options.auth ?? (await authHeaders(ctx, service));
  const baseUrl = await baseUrlOf(ctx, service);
  const headers = { 'user-agent': 'Spur', ...service.headers, ...auth };
  const pathed = hasPath(baseUrl);

  async function request(req: ServiceRequest): Promise<ServiceResponse> {
    const url = urlOf(baseUrl, req);
    if (pathed && !isUnderBase(new URL(url), baseUrl))
      throw new NodeExecutionError(
        `${service.label}: the request's path leaves ${service.baseVariable} (${baseUrl}); nothing was sent`,
      );
    const { res, text } = await send(ctx, service, url, {
      method: req.method ?? 'GET',
      headers: {
        ...(req.json !== undefined ? { accept: 'application/json' } : {}),
        ...headers,
        ...contentType(req),
        ...req.headers,
      },
      body:
        req.json !== undefined
          ? JSON.stringify(req.json)
          : req.form
            ? new URLSearchParams(req.form).toString()
            : undefined,
    });
    if (!res.ok && !req.accept?.includes(res.status)) throw failureForStatus(service, res.status, res.headers, text);
    return { status: res.status, headers: res.headers, text, json: parseJson(text) };
  }

  const read = <T>(res: ServiceResponse, schema: z.ZodType<T>, what: string): T => {
    const parsed = schema.safeParse(res.json);
    if (parsed.success) return parsed.data;
    const problem = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
    throw new NodeExecutionError(
      `${service.label} answered ${what} with an unexpected body (${problem}): ${res.text.slice(0, 200)}`,
    );
  };

  return {
    service,
    baseUrl,
    request,
    get: async (path, schema, query) => read(await request({ path, query }), schema, `GET ${path}`),
    post: async (path, json, schema) => read(await request({ method: 'POST', path, json }), schema, `POST ${path}`),
  };
}

async function authHeaders(ctx: ServiceContext, service: ServiceSpec): Promise<Record<string, string>> {
  const auth = service.auth;
  if (auth.kind === 'none') return {};
  if (auth.kind === 'header') return { [auth.header]: await requireSetting(ctx, auth.variable) };
  const token = auth.optional ? (await ctx.secret(auth.variable))?.trim() : await requireSetting(ctx, auth.variable);
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** The configured base, trailing slashes dropped, else the default; it must be an http(s) URL. */
export async function baseUrlOf(ctx: ServiceContext, service: ServiceSpec): Promise<string> {
  const configured =
    (await ctx.secret(service.baseVariable))?.trim() ||
    (service.fallbackVariable ? (await ctx.secret(service.fallbackVariable))?.trim() : undefined);
  const base = (configured || service.defaultBase).replace(/\/+$/, '');
  let parsed: URL | undefined;
  try {
    parsed = new URL(base);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.search || parsed.hash) {
    throw new NodeExecutionError(
      `${service.baseVariable} must be an http(s) base URL without query or fragment, got '${base}'`,
    );
  }
  return base;
}

/**
 * Whether the base has a path (a shared gateway's `/jina`): then a request must stay under it, since
 * a path from a node's input (a page to read, a repository name) may hold `..` or an encoded
 * separator and the service's credential goes with every request. A base without a path is the
 * whole origin: nothing to leave.
 */
function hasPath(baseUrl: string): boolean {
  return new URL(baseUrl).pathname.replace(/\/+$/, '') !== '';
}

function urlOf(baseUrl: string, req: ServiceRequest): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(req.query ?? {}))
    if (value !== undefined && value !== null) query.set(key, String(value));
  const search = query.toString();
  return `${baseUrl}${req.path}${search ? (req.path.includes('?') ? '&' : '?') + search : ''}`;
}

function contentType(req: ServiceRequest): Record<string, string> {
  if (req.json !== undefined) return { 'content-type': 'application/json; charset=utf-8' };
  if (req.form) return { 'content-type': 'application/x-www-form-urlencoded' };
  return {};
}

/**
 * fetch, body included, under the activity's cancellation and a timeout; transport failures
 * (refused, reset, timed out) become transient.
 */
async function send(
  ctx: ServiceContext,
  service: ServiceSpec,
  url: string,
  init: RequestInit,
): Promise<{ res: Response; text: string }> {
  try {
    const res = await ctx.fetch(url, {
      ...init,
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
    });
    return { res, text: await res.text() };
  } catch (err) {
    // A cancelled activity reports its own cancellation, not a service failure.
    if (ctx.signal.aborted) throw ctx.signal.reason ?? err;
    throw networkFailure(service, err);
  }
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
