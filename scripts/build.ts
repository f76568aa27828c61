// Compiles the api and worker to JavaScript in dist/ (one .js per .ts, same folders): what the image
// and the test harness run. Loading TypeScript through tsx at every process start costs about twice
// the CPU of loading the compiled files; `npm run dev` keeps tsx, which needs no build step.
// Usage: tsx scripts/build.ts [<out-dir>]
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT } from './lib/tools';
import { buildConsole } from './build-console';

/** The folders the processes load: the entries (src/processes/api.ts, src/processes/worker.ts, …) and all they import. */
const SOURCES = ['src', 'temporal'];

function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return typeScriptFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [full] : [];
  });
}

export async function buildDist(outDir = path.join(REPO_ROOT, 'dist')): Promise<string> {
  for (const folder of SOURCES) rmSync(path.join(outDir, folder), { recursive: true, force: true });
  await build({
    entryPoints: SOURCES.flatMap((folder) => typeScriptFiles(path.join(REPO_ROOT, folder))),
    outdir: outDir,
    outbase: REPO_ROOT,
    // Transpiled file by file, as tsx does: imports stay imports, so the folders keep their meaning.
    bundle: false,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'error',
  });
  return outDir;
}

/** Where a source entry (`src/processes/worker.ts`) lands in dist/. */
export function distEntry(entry: string, outDir = path.join(REPO_ROOT, 'dist')): string {
  return path.join(outDir, entry.replace(/\.ts$/, '.js'));
}

if (require.main === module) {
  const out = process.argv[2] ?? path.join(REPO_ROOT, 'dist');
  void buildDist(out)
    .then((dir) => console.log(`api and worker compiled to ${dir}`))
    .then(() => buildConsole(path.join(out, 'console')))
    .then(({ dir, bytes }) => console.log(`console bundled into ${dir} (${(bytes / 1024).toFixed(1)} KiB of script)`));
}
