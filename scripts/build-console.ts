// Bundles the console (console/: Preact, uPlot, TypeScript) into one script and a stylesheet under
// dist/console/, served by the api at /console/. Everything it needs is bundled here, at build
// time: the browser fetches nothing from anywhere else. Run by setup and by `npm run build`.
// Usage: tsx scripts/build-console.ts [<out-dir>]
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT } from './lib/tools';

/** Server modules the console runs as they are: lists of names that import nothing at run time. */
const SHARED_MODULES: ReadonlySet<string> = new Set([
  'src/engine/run-event-names.ts',
  'src/contracts/run-action-contract.ts',
  'src/contracts/schedule-contract.ts',
]);

export const CONSOLE_OUT = path.join(REPO_ROOT, 'dist', 'console');

export async function buildConsole(outDir = CONSOLE_OUT): Promise<{ dir: string; bytes: number }> {
  const source = path.join(REPO_ROOT, 'console');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(path.join(outDir, 'assets'), { recursive: true });
  const result = await build({
    entryPoints: [path.join(source, 'src', 'main.tsx')],
    outfile: path.join(outDir, 'assets', 'console.js'),
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['chrome120', 'firefox120'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: path.join(source, 'tsconfig.json'),
    metafile: true,
    absWorkingDir: REPO_ROOT,
    logLevel: 'error',
  });
  // The console reads the REST API; server code it names is for its types only, never bundled,
  // but for the shared lists of names above.
  const foreign = Object.keys(result.metafile.inputs).filter(
    (input) =>
      !input.startsWith('console/') &&
      !input.startsWith('node_modules/preact/') &&
      !input.startsWith('node_modules/uplot/') &&
      !SHARED_MODULES.has(input),
  );
  if (foreign.length > 0) throw new Error(`the console bundle would hold code from outside it: ${foreign.join(', ')}`);
  copyFileSync(path.join(source, 'index.html'), path.join(outDir, 'index.html'));
  const bytes = Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith('.js'))
    .reduce((n, [, o]) => n + o.bytes, 0);
  return { dir: outDir, bytes };
}

if (require.main === module) {
  void buildConsole(process.argv[2]).then(({ dir, bytes }) =>
    console.log(`console bundled into ${dir} (${(bytes / 1024).toFixed(1)} KiB of script)`),
  );
}
