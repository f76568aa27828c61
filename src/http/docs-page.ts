import { createReadStream } from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';

const ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
]);
const TYPES: Record<string, string> = { '.css': 'text/css', '.js': 'application/javascript', '.png': 'image/png' };

/** Swagger UI served from the npm package, so the docs page needs no outside network. */
export function mountDocsPage(router: Router, openApiPath: string): void {
  // The package's folder, found without loading the package: its index requires the whole Swagger UI
  // bundle (a third of the api's start-up CPU) only to export this path.
  const assetDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html';
    ctx.body = `<!doctype html><html><head><meta charset="utf-8"><title>Spur API</title>
<link rel="stylesheet" href="docs/swagger-ui.css"></head><body><div id="ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: ${JSON.stringify(openApiPath)}, dom_id: '#ui' });</script>
</body></html>`;
  });
  router.get('/docs/:asset', (ctx) => {
    const asset = ctx.params.asset ?? '';
    if (!ASSETS.has(asset)) return; // falls through to the JSON 404
    ctx.type = TYPES[path.extname(asset)] ?? 'application/octet-stream';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = createReadStream(path.join(assetDir, asset));
  });
}
