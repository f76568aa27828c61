import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Middleware } from 'koa';
import { type ExportRoutes, exportRoutes, resolveExportFile } from './export-routes';
import { unavailablePage } from './pages';

/** The UI's static export on disk, or why there is none. */
export type WebUiExport = { available: true; dir: string; routes: ExportRoutes } | { available: false; reason: string };

/** Lists the export once at start: the file list is also the whitelist of what can be served. */
export function loadWebUiExport(config: { enabled: boolean; dir: string }): WebUiExport {
  if (!config.enabled) return { available: false, reason: 'The web UI is turned off (SPUR_WEB_UI=false).' };
  const dir = path.resolve(config.dir);
  if (!existsSync(path.join(dir, 'index.html'))) {
    return {
      available: false,
      reason: `PySpur's web UI is not installed: ${dir} holds no index.html. Run \`bash scripts/setup.sh\`; it fetches the UI from PyPI (it needs python3 with pip and access to the registry) and says what failed.`,
    };
  }
  return { available: true, dir, routes: exportRoutes(listFiles(dir)) };
}

function listFiles(root: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(root, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(root, rel));
    else if (entry.isFile() || entry.isSymbolicLink()) out.push(rel);
  }
  return out;
}

/** Hashed build assets never change under their name; pages must be revalidated so a new build shows. */
function cacheControl(file: string): string {
  if (file.startsWith('_next/static/')) return 'public, max-age=31536000, immutable';
  if (file.endsWith('.html')) return 'no-cache';
  return 'public, max-age=3600';
}

/** What the UI answers a GET of a path with: a file of the export, a page (or the export's 404 page), the "no UI" notice. */
export type WebUiPathKind = 'asset' | 'page' | 'notice';

/** The kind of answer `webUiMiddleware` gives for a path it is not told to leave alone; null when it gives none. */
export function webUiPathKind(ui: WebUiExport, urlPath: string): WebUiPathKind | null {
  if (!ui.available) return urlPath === '/' ? 'notice' : null;
  const file = resolveExportFile(ui.routes, urlPath);
  return file === null || file.endsWith('.html') ? 'page' : 'asset';
}

export interface WebUiOptions {
  /** Paths the UI must leave alone (the API, the login page). */
  reserved: (path: string) => boolean;
}

/**
 * Serves the export at `/` with Next's export routing; everything reserved passes through. Who may
 * see pages is the gate's decision (http/gate.ts): it sends a browser without a session to the
 * login page before this runs.
 */
export function webUiMiddleware(ui: WebUiExport, options: WebUiOptions): Middleware {
  return async function serveWebUi(ctx, next) {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || options.reserved(ctx.path)) return next();
    if (!ui.available) {
      if (ctx.path !== '/') return next();
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = unavailablePage(ui.reason);
      return;
    }
    const file = resolveExportFile(ui.routes, ctx.path);
    const served = file ?? (ui.routes.files.has('404.html') ? '404.html' : null);
    if (served === null) return next();
    const full = path.join(ui.dir, served);
    const stat = statSync(full);
    ctx.status = file === null ? 404 : 200;
    ctx.type = path.extname(served) || 'application/octet-stream';
    ctx.length = stat.size;
    ctx.lastModified = stat.mtime;
    ctx.set('Cache-Control', cacheControl(served));
    // HEAD: Koa sends the headers and no body; opening the file would only leak a descriptor.
    if (ctx.method === 'GET') ctx.body = createReadStream(full);
  };
}
