/**
 * Routing of a Next.js static export, as pure functions over the export's file list: a request
 * path maps to an exported file (`/_next/…`, `/favicon.ico`), to a page (`/dashboard` →
 * `dashboard.html`), or to a dynamic page (`/workflows/S1` → `workflows/[id].html`,
 * `/sessions/u/s` → `sessions/[userId]/[sessionId].html`). Only names from the list can ever be
 * served, so no request path can reach outside the export.
 */
export interface ExportRoutes {
  files: ReadonlySet<string>;
  /** Pages with `[param]` segments, most literal segments first. */
  dynamicPages: readonly { segments: readonly string[]; file: string }[];
}

const DYNAMIC = /^\[[^\]/]+\]$/;

export function exportRoutes(relativeFiles: readonly string[]): ExportRoutes {
  const files = new Set(relativeFiles);
  const dynamicPages = relativeFiles
    .filter((f) => f.endsWith('.html') && f.split('/').some((s) => DYNAMIC.test(s.replace(/\.html$/, ''))))
    .map((file) => ({ segments: file.replace(/\.html$/, '').split('/'), file }))
    .sort((a, b) => literalCount(b.segments) - literalCount(a.segments));
  return { files, dynamicPages };
}

function literalCount(segments: readonly string[]): number {
  return segments.filter((s) => !DYNAMIC.test(s)).length;
}

/** Decoded path segments of a URL path, or null for one no file can have (`..`, NUL, bad escapes). */
export function pathSegments(urlPath: string): string[] | null {
  const segments: string[] = [];
  for (const raw of urlPath.split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (segment === '.' || segment === '..' || /[\\\0]/.test(segment) || segment.includes('/')) return null;
    segments.push(segment);
  }
  return segments;
}

/** The export's file for a request path, or null (the caller answers with the export's 404 page). */
export function resolveExportFile(routes: ExportRoutes, urlPath: string): string | null {
  const segments = pathSegments(urlPath);
  if (segments === null) return null;
  if (segments.length === 0) return routes.files.has('index.html') ? 'index.html' : null;
  const joined = segments.join('/');
  for (const candidate of [joined, `${joined}.html`, `${joined}/index.html`]) {
    if (routes.files.has(candidate)) return candidate;
  }
  for (const page of routes.dynamicPages) {
    if (page.segments.length !== segments.length) continue;
    if (page.segments.every((s, i) => DYNAMIC.test(s) || s === segments[i])) return page.file;
  }
  return null;
}
