import { z } from 'zod';
import { NodeExecutionError } from '../errors.js';
import type { NodeExecutionContext } from '../types.js';
import { connect, type ServiceClient } from './http/service-client.js';
import { SERVICES } from './http/services.js';

/**
 * GitHub REST v3 through the service client, and the JSON text PySpur's GitHub tools answer
 * (their field names, `json.dumps(…, indent=2)` layout, timestamps in Python's isoformat).
 */
export const gitHub = (ctx: NodeExecutionContext) => connect(ctx, SERVICES.github);

/** `owner/repo` (a github.com URL or a `.git` suffix is accepted too) as an encoded path. */
export function repoPath(repoName: string): string {
  const name = repoName
    .trim()
    .replace(/^https?:\/\/[^/]+\//, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '');
  const parts = name.split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1])
    throw new NodeExecutionError(`repo_name must be 'owner/repo', got '${repoName}'`);
  return `/repos/${parts.map(encodeURIComponent).join('/')}`;
}

/** A pull request number from config (PySpur types it as text for one node, int for another). */
export function prNumber(value: string | number | null | undefined): number {
  const n = typeof value === 'number' ? value : Number(String(value ?? '').trim());
  if (!Number.isInteger(n) || n <= 0)
    throw new NodeExecutionError(`pr_number must be a pull request number, got '${value ?? ''}'`);
  return n;
}

/** GitHub's `2024-01-02T03:04:05Z` as Python's `datetime.isoformat()` prints it. */
export function isoformat(timestamp: string | null | undefined): string | null {
  return timestamp ? timestamp.replace(/Z$/, '+00:00') : null;
}

export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

const MAX_PAGES = 100;

/** Every item of a paged list, following `Link: rel="next"` (its query, on the configured base). */
export async function allPages<T>(
  api: ServiceClient,
  path: string,
  item: z.ZodType<T>,
  query: Record<string, string | number> = {},
): Promise<T[]> {
  const items: T[] = [];
  let next: Record<string, string | number> | undefined = { per_page: 100, ...query };
  for (let page = 0; next && page < MAX_PAGES; page++) {
    const res = await api.request({ path, query: next });
    const parsed = z.array(item).safeParse(res.json);
    if (!parsed.success)
      throw new NodeExecutionError(`GitHub answered GET ${path} with an unexpected body: ${res.text.slice(0, 200)}`);
    items.push(...parsed.data);
    next = nextPageQuery(res.headers.get('link'));
  }
  return items;
}

function nextPageQuery(link: string | null): Record<string, string> | undefined {
  const match = link
    ?.split(',')
    .find((part) => /rel="next"/.test(part))
    ?.match(/<([^>]+)>/);
  if (!match?.[1]) return undefined;
  try {
    return Object.fromEntries(new URL(match[1]).searchParams);
  } catch {
    return undefined;
  }
}

const login = z.looseObject({ login: z.string() });
const nullableText = z
  .string()
  .nullish()
  .transform((v) => v ?? null);

export const repository = z.looseObject({
  full_name: z.string(),
  description: nullableText,
  html_url: z.string(),
  stargazers_count: z.number(),
  forks_count: z.number(),
  open_issues_count: z.number().optional(),
  language: nullableText,
  license: z.looseObject({ name: z.string() }).nullish(),
  default_branch: z.string().optional(),
});

export const pullRequest = z.looseObject({
  number: z.number(),
  title: z.string(),
  user: login,
  body: nullableText,
  created_at: z.string(),
  updated_at: z.string().nullish(),
  state: z.string(),
  mergeable: z.boolean().nullish(),
  html_url: z.string(),
});

export const changedFile = z.looseObject({
  filename: z.string(),
  status: z.string(),
  additions: z.number(),
  deletions: z.number(),
  changes: z.number(),
  raw_url: nullableText,
  blob_url: nullableText,
  patch: nullableText,
});

export const issue = z.looseObject({
  id: z.number(),
  number: z.number(),
  title: z.string(),
  body: nullableText,
  html_url: z.string(),
  state: z.string(),
  created_at: z.string(),
  user: login,
});
