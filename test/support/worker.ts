import { chmodSync, copyFileSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ManagedProcess, spawnManaged } from '../../scripts/lib/processes';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { entryArgs, stack } from './stack';

export interface TestWorker {
  process: ManagedProcess;
  logFile: string;
  stop(): Promise<void>;
}

let counter = 0;
const START_WITHIN_MS = 90_000;

/**
 * A real worker process (src/processes/worker.ts) for the given api's database and task queue, using
 * the bundle the harness prebuilt. Crash tests kill it with `process.kill('SIGKILL')`.
 */
export async function startWorker(
  env: Record<string, string>,
  extraEnv: Record<string, string> = {},
  user?: { uid: number; gid: number },
): Promise<TestWorker> {
  const logFile = path.join(stack.tmpDir, `worker-${process.pid}-${++counter}.log`);
  const child = spawnManaged({
    name: 'worker',
    command: process.execPath,
    // As the image runs it (Dockerfile): one process, so a SIGTERM to the pid reaches the app itself.
    args: entryArgs('src/processes/worker.ts'),
    env: { ...env, SPUR_LOG_LEVEL: 'info', SPUR_WORKFLOW_BUNDLE: stack.workflowBundle, ...extraEnv },
    cwd: REPO_ROOT,
    logFile,
    user,
  });
  // A readiness wait, not a speed check: a start costs about 2 CPU-s, which six test files at once
  // on two cores (each with its own processes, beside the servers) have stretched past 30 s.
  const deadline = Date.now() + START_WITHIN_MS;
  while (!readLog(logFile).includes('worker running')) {
    if (!child.running) throw new Error(`worker exited during start:\n${readLog(logFile).slice(-3000)}`);
    if (Date.now() > deadline)
      throw new Error(`worker did not start in ${START_WITHIN_MS / 1000} s:\n${readLog(logFile).slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { process: child, logFile, stop: () => child.stop('SIGTERM', 15_000) };
}

/** A worker running as uid 65534 (nobody), reading a copy of the bundle from a folder it may enter. */
export function startUnprivilegedWorker(
  env: Record<string, string>,
  extraEnv: Record<string, string> = {},
): Promise<TestWorker> {
  // It loads the repository's code and node_modules as uid 65534: every folder above them must let others in.
  for (let up = REPO_ROOT; up !== path.dirname(up); up = path.dirname(up)) {
    if ((statSync(up).mode & 0o001) === 0) {
      throw new Error(
        `an unprivileged worker (uid 65534) cannot enter ${up}, above the repository; clone Spur where other users may traverse (chmod o+x ${up})`,
      );
    }
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spur-bundle-'));
  chmodSync(dir, 0o755);
  const bundle = path.join(dir, 'workflow-bundle.js');
  copyFileSync(stack.workflowBundle, bundle);
  chmodSync(bundle, 0o644);
  return startWorker(env, { SPUR_WORKFLOW_BUNDLE: bundle, HOME: '/tmp', ...extraEnv }, { uid: 65534, gid: 65534 });
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
