import { readFileSync } from 'node:fs';
import type { Route } from 'playwright-core';

/**
 * PySpur's UI loads its icons from the Iconify API at run time. The browser tests let nothing
 * leave the machine, so they answer those requests from the same icon sets published on npm
 * (`@iconify-json/<set>`, dev dependencies): icons show in screenshots and buttons keep their shape.
 */
const SETS = ['solar', 'lucide', 'gravity-ui', 'material-symbols', 'akar-icons'] as const;
const ICONIFY_HOSTS = new Set(['api.iconify.design', 'api.unisvg.com', 'api.simplesvg.com']);

interface IconSet {
  prefix: string;
  icons: Record<string, unknown>;
  aliases?: Record<string, { parent: string }>;
  width?: number;
  height?: number;
}

const loaded = new Map<string, IconSet>();

function iconSet(prefix: string): IconSet | undefined {
  if (!(SETS as readonly string[]).includes(prefix)) return undefined;
  let set = loaded.get(prefix);
  if (!set) {
    set = JSON.parse(readFileSync(require.resolve(`@iconify-json/${prefix}/icons.json`), 'utf8')) as IconSet;
    loaded.set(prefix, set);
  }
  return set;
}

/** The Iconify API's answer to `/<prefix>.json?icons=a,b`, or null for a request it is not. */
export function iconifyAnswer(url: string): unknown {
  const parsed = new URL(url);
  const match = /^\/([a-z0-9-]+)\.json$/.exec(parsed.pathname);
  if (!ICONIFY_HOSTS.has(parsed.hostname) || !match) return null;
  const set = iconSet(match[1]!);
  const names = (parsed.searchParams.get('icons') ?? '').split(',').filter(Boolean);
  if (!set) return { prefix: match[1], icons: {}, not_found: names };
  const icons: Record<string, unknown> = {};
  const aliases: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const name of names) {
    const alias = set.aliases?.[name];
    if (set.icons[name]) icons[name] = set.icons[name];
    else if (alias && set.icons[alias.parent]) {
      aliases[name] = alias;
      icons[alias.parent] = set.icons[alias.parent];
    } else missing.push(name);
  }
  return {
    prefix: set.prefix,
    icons,
    aliases,
    width: set.width ?? 16,
    height: set.height ?? 16,
    ...(missing.length ? { not_found: missing } : {}),
  };
}

/** Fulfils an Iconify request locally; false when the route is no Iconify request. */
export async function fulfilIconRequest(route: Route): Promise<boolean> {
  const answer = iconifyAnswer(route.request().url());
  if (answer === null) return false;
  await route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(answer) });
  return true;
}
