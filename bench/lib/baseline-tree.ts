// Another commit's source tree beside this one, for a bench that measures two builds in one run
// (BENCH_BASELINE): a detached git worktree in a temporary folder, sharing this tree's node_modules
// and tools (a baseline from before a dependency changed would need its own install).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/tools';

export interface BaselineTree {
  /** The commit it holds (short hash), as the report names it. */
  commit: string;
  root: string;
  remove(): void;
}

const git = (args: string[]) => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();

export function checkOutBaseline(ref: string): BaselineTree {
  const commit = git(['rev-parse', '--short', `${ref}^{commit}`]);
  const parent = mkdtempSync(path.join(os.tmpdir(), 'spur-baseline-'));
  const root = path.join(parent, 'tree');
  git(['worktree', 'add', '--detach', '--quiet', root, commit]);
  for (const shared of ['node_modules', '.tools'])
    if (existsSync(path.join(REPO_ROOT, shared))) symlinkSync(path.join(REPO_ROOT, shared), path.join(root, shared));
  return {
    commit,
    root,
    remove() {
      git(['worktree', 'remove', '--force', root]);
      rmSync(parent, { recursive: true, force: true });
    },
  };
}
