// What a worker run as another user (uid 65534) loads, in a folder that user may enter: the clone may
// sit where only its owner can (a `mktemp -d` folder, a private home), and the worker must not be
// given the clone itself, nor the harness's folder (its data and logs), to read.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/tools';

export interface RuntimeForOthers {
  /** The folder (mode 755): package.json, dist/, node_modules/ and the workflow bundle. */
  dir: string;
  /** The compiled files, laid out as in `dist`. */
  dist: string;
  bundle: string;
  remove(): void;
}

/** Everyone may read files and enter folders under `dir`, as in an image. */
function openToOthers(dir: string): void {
  execFileSync('chmod', ['-R', 'a+rX', dir]);
}

/**
 * The dependencies as hard links (a second after the first: the same files under a path others may
 * enter; npm leaves them readable by all), or copied where the temp folder is on another file system.
 */
function linkDependencies(to: string): void {
  const from = realpathSync(path.join(REPO_ROOT, 'node_modules'));
  try {
    execFileSync('cp', ['-al', from, to], { stdio: 'pipe' });
  } catch {
    rmSync(to, { recursive: true, force: true });
    execFileSync('cp', ['-R', from, to]);
    openToOthers(to);
  }
}

/** A fresh copy of the compiled `dist` and `bundle`, removed with `remove()`. */
export function runtimeForOthers(dist: string, bundle: string): RuntimeForOthers {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spur-runtime-'));
  try {
    chmodSync(dir, 0o755);
    // Spur finds its source tree by the package.json above its files (src/source-tree.ts).
    copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(dir, 'package.json'));
    cpSync(dist, path.join(dir, 'dist'), { recursive: true });
    copyFileSync(bundle, path.join(dir, 'workflow-bundle.js'));
    openToOthers(path.join(dir, 'dist'));
    for (const file of ['package.json', 'workflow-bundle.js']) chmodSync(path.join(dir, file), 0o644);
    linkDependencies(path.join(dir, 'node_modules'));
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    dist: path.join(dir, 'dist'),
    bundle: path.join(dir, 'workflow-bundle.js'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
