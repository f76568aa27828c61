import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Middleware } from 'koa';
import { escapeHtml, page } from './pages';

/** Where the console is served: its pages under it, its bundle under `/console/assets/`. */
export const CONSOLE_PREFIX = '/console';
const ASSETS = `${CONSOLE_PREFIX}/assets/`;

/** The console's bundle on disk (scripts/build-console.ts), or why there is none. */
export type ConsoleBundle =
  { available: true; dir: string; assets: ReadonlySet<string> } | { available: false; reason: string };

/** Lists the bundle once at start: the list is also the whitelist of what is served. */
export function loadConsole(dir: string): ConsoleBundle {
  const root = path.resolve(dir);
  if (!existsSync(path.join(root, 'index.html')))
    return {
      available: false,
      reason: `The console is not built: ${root} holds no index.html. Run \`bash scripts/setup.sh\` or \`npm run build\`.`,
    };
  const assets = existsSync(path.join(root, 'assets')) ? readdirSync(path.join(root, 'assets')) : [];
  return { available: true, dir: root, assets: new Set(assets) };
}

export const isConsolePath = (urlPath: string): boolean =>
  urlPath === CONSOLE_PREFIX || urlPath.startsWith(`${CONSOLE_PREFIX}/`);

/**
 * What a GET of a console path is: a file of its bundle (`asset`, anyone may fetch it: it holds no
 * data), or one of its pages (`page`: the gate sends a browser without a session to sign in first).
 */
export function consolePathKind(bundle: ConsoleBundle, urlPath: string): 'asset' | 'page' | null {
  if (!isConsolePath(urlPath)) return null;
  if (urlPath.startsWith(ASSETS))
    return bundle.available && bundle.assets.has(urlPath.slice(ASSETS.length)) ? 'asset' : null;
  return 'page';
}

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * Serves the console: its bundle's files, and its one page for every path under /console (the
 * console routes in the browser). Every screen's data comes from the REST API, with the session.
 */
export function consoleMiddleware(bundle: ConsoleBundle): Middleware {
  return async function serveConsole(ctx, next) {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !isConsolePath(ctx.path)) return next();
    if (!bundle.available) {
      ctx.status = 503;
      ctx.set('Retry-After', '60');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = page('Spur console', `<h1>The console is not available</h1><p>${escapeHtml(bundle.reason)}</p>`);
      return;
    }
    const asset = ctx.path.startsWith(ASSETS) ? ctx.path.slice(ASSETS.length) : null;
    if (asset !== null && !bundle.assets.has(asset)) return next();
    const full = asset === null ? path.join(bundle.dir, 'index.html') : path.join(bundle.dir, 'assets', asset);
    const stat = statSync(full);
    ctx.type = asset === null ? 'text/html; charset=utf-8' : (TYPES[path.extname(asset)] ?? 'application/octet-stream');
    ctx.length = stat.size;
    ctx.lastModified = stat.mtime;
    // Names do not change with a build: revalidate, so a new build shows at once.
    ctx.set('Cache-Control', 'no-cache');
    if (ctx.method === 'GET') ctx.body = createReadStream(full);
  };
}
