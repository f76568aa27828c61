import { createHash } from 'node:crypto';
import { z } from 'zod';
import { NodeExecutionError } from '../errors.js';
import type { NodeExecutionContext } from '../types.js';
import { ServiceRejectedError } from './http/service-errors.js';
import { baseUrlOf, connect, type ServiceClient } from './http/service-client.js';
import { SERVICES } from './http/services.js';
import { requireSetting } from './http/settings.js';

/** PySpur's user agent when REDDIT_USER_AGENT is unset. */
const DEFAULT_USER_AGENT = 'RedditTools v1.0';
/** Renew a token this long before Reddit says it expires. */
const EXPIRY_MARGIN_MS = 60_000;

/** Who the token is for: the app itself (read-only) or a user who may post. */
export type RedditLogin = { kind: 'app' } | { kind: 'user'; username: string; password: string };

interface CachedToken {
  token: string;
  expiresAt: number;
}

/** Access tokens per worker process, until they expire (keyed by endpoint, app and user). */
const tokens = new Map<string, CachedToken>();

const tokenAnswer = z.looseObject({
  access_token: z.string().optional(),
  expires_in: z.number().optional(),
  error: z.unknown().optional(),
});

/**
 * Runs `call` against Reddit's OAuth API with a bearer token from `POST /api/v1/access_token`
 * (client credentials, or the password grant for posting). A cached token that Reddit no longer
 * accepts (401) is dropped and the call made once more with a fresh one.
 */
export async function withReddit<T>(
  ctx: NodeExecutionContext,
  login: RedditLogin,
  call: (api: ServiceClient) => Promise<T>,
): Promise<T> {
  const clientId = await requireSetting(ctx, 'REDDIT_CLIENT_ID');
  const clientSecret = await requireSetting(ctx, 'REDDIT_CLIENT_SECRET');
  const userAgent = (await ctx.secret('REDDIT_USER_AGENT'))?.trim() || DEFAULT_USER_AGENT;
  const authBase = await baseUrlOf(ctx, SERVICES.redditAuth);
  const key = createHash('sha256')
    .update(JSON.stringify([authBase, clientId, clientSecret, login]))
    .digest('hex');
  const api = async (token: string) =>
    connect(ctx, SERVICES.reddit, { auth: { authorization: `bearer ${token}`, 'user-agent': userAgent } });

  const cached = tokens.get(key);
  if (cached && cached.expiresAt > Date.now()) {
    try {
      return await call(await api(cached.token));
    } catch (err) {
      if (!(err instanceof ServiceRejectedError && err.status === 401)) throw err;
      tokens.delete(key);
    }
  }
  const fresh = await fetchToken(ctx, { clientId, clientSecret, userAgent, login });
  tokens.set(key, fresh);
  return call(await api(fresh.token));
}

async function fetchToken(
  ctx: NodeExecutionContext,
  a: { clientId: string; clientSecret: string; userAgent: string; login: RedditLogin },
): Promise<CachedToken> {
  const basic = Buffer.from(`${a.clientId}:${a.clientSecret}`).toString('base64');
  const auth = await connect(ctx, SERVICES.redditAuth, {
    auth: { authorization: `Basic ${basic}`, 'user-agent': a.userAgent },
  });
  const form: Record<string, string> =
    a.login.kind === 'user'
      ? { grant_type: 'password', username: a.login.username, password: a.login.password }
      : { grant_type: 'client_credentials' };
  const res = await auth.request({ method: 'POST', path: '/api/v1/access_token', form });
  const answer = tokenAnswer.safeParse(res.json);
  // Reddit answers a wrong password with 200 and {"error": "invalid_grant"}.
  if (!answer.success || !answer.data.access_token) {
    const why = answer.success && answer.data.error !== undefined ? String(answer.data.error) : res.text.slice(0, 200);
    throw new ServiceRejectedError(`Reddit API error: authentication failed (${why})`, res.status);
  }
  const lifetimeMs = (answer.data.expires_in ?? 3600) * 1000;
  return { token: answer.data.access_token, expiresAt: Date.now() + Math.max(lifetimeMs - EXPIRY_MARGIN_MS, 0) };
}

/** A path segment from a subreddit or user name (`r/python` and `u/name` prefixes are dropped). */
export function redditName(value: string, field: string): string {
  const name = value
    .trim()
    .replace(/^\/?(r|u|user)\//i, '')
    .replace(/\/+$/, '');
  if (!name) throw new NodeExecutionError(`${field} is required`);
  return encodeURIComponent(name);
}

/** A listing (`{data: {children: [{data}]}}`) of things read with `item`. */
export function listing<T>(item: z.ZodType<T>): z.ZodType<T[]> {
  return z
    .looseObject({ data: z.looseObject({ children: z.array(z.looseObject({ data: item })) }) })
    .transform((l) => l.data.children.map((c) => c.data as T));
}

/** `/about` answers: `{kind, data}`. */
export function thing<T>(item: z.ZodType<T>): z.ZodType<T> {
  return z.looseObject({ data: item }).transform((t) => t.data as T);
}

export const post = z.looseObject({
  id: z.string(),
  name: z.string().optional(),
  title: z.string(),
  score: z.number(),
  url: z.string(),
  author: z.string().nullish(),
  created_utc: z.number(),
  num_comments: z.number(),
  permalink: z.string(),
  is_self: z.boolean(),
  selftext: z.string().nullish(),
  link_flair_text: z.string().nullish(),
});

export const subreddit = z.looseObject({
  display_name: z.string(),
  title: z.string(),
  description: z.string().nullish(),
  public_description: z.string().nullish(),
  subscribers: z.number().nullish(),
  active_user_count: z.number().nullish(),
  created_utc: z.number(),
  over18: z.boolean().nullish(),
  url: z.string(),
});

export const flairTemplate = z.looseObject({ id: z.string(), text: z.string() });

/** Link flair templates; a subreddit that hides them from this account (403) has none to offer. */
export async function linkFlairs(api: ServiceClient, sub: string): Promise<z.output<typeof flairTemplate>[]> {
  const res = await api.request({ path: `/r/${sub}/api/link_flair_v2`, accept: [403] });
  if (res.status === 403) return [];
  const parsed = z.array(flairTemplate).safeParse(res.json);
  if (!parsed.success)
    throw new NodeExecutionError(`Reddit answered the flair list with an unexpected body: ${res.text.slice(0, 200)}`);
  return parsed.data;
}
